import { randomBytes } from 'node:crypto';
import type { PartResult } from '../part';
import { accountProblems, ackedRefs, awaitDelivery } from './accounting';
import { lane, percentile, send, tally, type Outcome } from './client';
import { waitFor } from '../../test/support/wait';
import { secs } from './env';
import { callSubscriber, startStack, type Stack } from './stack';

/** The longest any answer may take, outage or not: a 503 must come fast, never a hang. */
export const ANSWER_WITHIN_MS = 2000;
/** After the server returns, each kind of request must succeed again within this. */
export const RECOVER_WITHIN_MS = 5000;

export type Backend = 'redis' | 'postgres';

export interface OutageOptions {
  backend: Backend;
  outageMs: number;
  /** Milliseconds between two requests of one lane. */
  paceMs?: number;
  /**
   * 0 (`npm run chaos`): the time rules are absolute. Above 0 (`npm test`, on a machine that
   * may be busy): each bound grows by this factor times the p99 of the answers before the
   * outage, measured in the same run, so load does not fail the suite but a hang still does.
   */
  slackFactor?: number;
  /** Redis only: SIGSTOP it (it keeps its connections and never answers) instead of a kill. */
  freeze?: boolean;
  /** The longest any answer may take (default ANSWER_WITHIN_MS). */
  answerWithinMs?: number;
  log(line: string): void;
}

/**
 * What each lane of requests must get while the backend is away (outside the outage every
 * lane must succeed). Ingestion and reads need no Redis; everything but /healthz needs
 * Postgres. A keyed write (Idempotency-Key) needs both.
 */
const DURING: Record<Backend, Record<string, number[]>> = {
  redis: { ingest: [202], read: [200], keyed: [503], live: [200], ready: [503] },
  postgres: { ingest: [503], read: [503], keyed: [503], live: [200], ready: [503] },
};
const SUCCESS: Record<string, number> = {
  ingest: 202,
  read: 200,
  keyed: 201,
  live: 200,
  ready: 200,
};

/** Ingestion lanes (the other kinds have one each). */
const INGEST_LANES = 6;

interface Lanes {
  outcomes: Outcome[];
  stop(): Promise<void>;
}

function startLanes(stack: Stack, receptionistId: string, auth: string, paceMs: number): Lanes {
  const outcomes: Outcome[] = [];
  const api = () => stack.api.baseUrl;
  const lanes = [
    // Several ingestion lanes keep transactions open at the instant the server goes away.
    ...Array.from({ length: INGEST_LANES }, () =>
      lane(outcomes, () => stack.ingest(receptionistId, 'ingest'), paceMs),
    ),
    lane(
      outcomes,
      () =>
        send(`${api()}/api/v1/calls?limit=10`, { lane: 'read', headers: { authorization: auth } }),
      paceMs,
    ),
    lane(
      outcomes,
      () => {
        const email = `lead-${randomBytes(6).toString('hex')}@example.com`;
        return send(`${api()}/api/v1/leads`, {
          lane: 'keyed',
          headers: { authorization: auth, 'idempotency-key': randomBytes(12).toString('hex') },
          body: { name: 'Chaos Lead', email },
          ref: email,
        });
      },
      paceMs,
    ),
    lane(outcomes, () => send(`${api()}/healthz`, { lane: 'live' }), paceMs),
    lane(outcomes, () => send(`${api()}/readyz`, { lane: 'ready' }), paceMs * 4),
  ];
  return { outcomes, stop: async () => void (await Promise.all(lanes.map((l) => l.stop()))) };
}

/**
 * A backend stopped under load: lanes of requests (ingestion, reads, keyed writes, liveness
 * and readiness probes) run against a real API process while a real worker delivers; the
 * private Redis (SIGKILL, restarted empty) or Postgres (`pg_ctl stop -m fast`) is away for
 * `outageMs`. Every answer must come within ANSWER_WITHIN_MS and be a success or a 503
 * `service_unavailable` with Retry-After (never a 500, never a reset or a hang); what needs
 * no such backend keeps working; each lane succeeds again within RECOVER_WITHIN_MS of the
 * server's return; every acked event (those committed during the outage included) is
 * delivered, and every acked keyed write exists.
 */
export async function runOutage(opts: OutageOptions): Promise<PartResult> {
  const { backend, outageMs, log } = opts;
  const stack = await startStack({ routes: { '/hook': (_q, res) => res.writeHead(200).end() } });
  try {
    const { tenant, receptionistId } = await callSubscriber(stack, stack.hookUrl('/hook'));
    const lanes = startLanes(stack, receptionistId, tenant.auth, opts.paceMs ?? 50);
    const { outcomes } = lanes;
    const succeeded = (name: string, after: number) =>
      outcomes.some((o) => o.lane === name && o.at >= after && o.status === SUCCESS[name]);
    // stopping: the stop begins; down: the server is stopped; back: its restart begins; up:
    // it accepts connections again.
    let stopping = 0;
    let down = 0;
    let back = 0;
    let up = 0;
    try {
      const warm = Date.now();
      await waitFor(
        'every lane to succeed',
        () => Object.keys(SUCCESS).every((n) => succeeded(n, warm)),
        { timeoutMs: 30_000, intervalMs: 20 },
      );
      // Let the worker deliver a while before the fault.
      await new Promise((r) => setTimeout(r, 1000));
      log(`  ${opts.freeze ? 'freezing' : 'stopping'} ${backend} for ${secs(outageMs)}`);
      stopping = Date.now();
      if (backend === 'redis' && opts.freeze) stack.servers.redis.freeze();
      else if (backend === 'redis') await stack.servers.redis.stop();
      else await stack.servers.pg.stop('fast');
      down = Date.now();
      // The outage itself is the condition under test, not a wait for something to happen.
      await new Promise((r) => setTimeout(r, outageMs - (Date.now() - down)));
      back = Date.now();
      if (backend === 'redis' && opts.freeze) stack.servers.redis.thaw();
      else if (backend === 'redis') await stack.servers.redis.start();
      else await stack.servers.pg.start();
      up = Date.now();
      log(`  ${backend} is back after ${secs(up - down)}`);
      await waitFor(
        'every lane to succeed again',
        () => Object.keys(SUCCESS).every((n) => succeeded(n, up)),
        { timeoutMs: 30_000, intervalMs: 20 },
      ).catch((err: Error) => log(`  ${err.message}`));
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      await lanes.stop();
    }
    const slackFactor = opts.slackFactor ?? 0;
    const answerWithinMs = opts.answerWithinMs ?? ANSWER_WITHIN_MS;
    return await verdict({
      ...{ stack, backend, outcomes, stopping, down, back, up, slackFactor, answerWithinMs, log },
    });
  } finally {
    await stack.destroy();
  }
}

async function verdict(opts: {
  stack: Stack;
  backend: Backend;
  outcomes: Outcome[];
  stopping: number;
  down: number;
  back: number;
  up: number;
  slackFactor: number;
  answerWithinMs: number;
  log(line: string): void;
}): Promise<PartResult> {
  const { stack, backend, outcomes, stopping, down, back, up, log } = opts;
  const beforeP99 = percentile(
    outcomes.filter((o) => o.at + o.ms < opts.stopping).map((o) => o.ms),
    99,
  );
  const slack = opts.slackFactor * beforeP99;
  const answerWithin = Math.round(opts.answerWithinMs + slack);
  const recoverWithin = Math.round(RECOVER_WITHIN_MS + slack);
  const ctx = stack.servers.ctx;
  const problems: string[] = [];
  const during = (o: Outcome) => o.at >= down && o.at + o.ms <= back;
  const before = (o: Outcome) => o.at + o.ms < stopping;
  const example = (o: Outcome) =>
    `${o.lane} at +${o.at - down} ms: ${o.status || o.error} in ${o.ms} ms`;
  const bad = (what: string, list: Outcome[]) => {
    if (list.length) problems.push(`${list.length} ${what}, e.g. ${example(list[0] as Outcome)}`);
  };
  bad(
    'request(s) without an HTTP answer',
    outcomes.filter((o) => o.status === 0),
  );
  bad(
    'answer(s) 5xx other than 503',
    outcomes.filter((o) => o.status >= 500 && o.status !== 503),
  );
  bad(
    '503(s) without Retry-After or not service_unavailable',
    outcomes.filter(
      (o) => o.status === 503 && (!o.retryAfter || o.errorType !== 'service_unavailable'),
    ),
  );
  bad(
    `answer(s) slower than ${answerWithin} ms`,
    outcomes.filter((o) => o.ms > answerWithin),
  );
  bad(
    'failure(s) before the outage',
    outcomes.filter((o) => before(o) && o.status !== SUCCESS[o.lane]),
  );
  const figures: PartResult['figures'] = [[`${backend} away for`, secs(up - down)]];
  const recovery: string[] = [];
  for (const name of Object.keys(SUCCESS)) {
    const mine = outcomes.filter((o) => o.lane === name);
    const inOutage = mine.filter(during);
    const allowed = DURING[backend][name] as number[];
    bad(
      `${name} answer(s) during the outage not ${allowed.join('/')}`,
      inOutage.filter((o) => !allowed.includes(o.status)),
    );
    const first = mine.find((o) => o.at >= up && o.status === SUCCESS[name]);
    const back = first ? first.at + first.ms - up : Infinity;
    if (back > recoverWithin)
      problems.push(`${name}: no success within ${recoverWithin} ms of ${backend}'s return`);
    recovery.push(`${name} ${first ? secs(back) : 'never'}`);
    figures.push([
      `${name} during the outage`,
      `${tally(inOutage)}; p99 ${percentile(
        inOutage.map((o) => o.ms),
        99,
      )} ms, max ${Math.max(0, ...inOutage.map((o) => o.ms))} ms`,
    ]);
  }
  figures.push(['success again after the return', recovery.join(', ')]);
  figures.push(['slowest answer overall', `${Math.max(...outcomes.map((o) => o.ms))} ms`]);
  figures.push(['requests', `${outcomes.length}: ${tally(outcomes)}`]);

  const ingests = outcomes.filter((o) => o.lane === 'ingest');
  const acked = ackedRefs(ingests);
  const ackedDuring = ingests.filter((o) => o.status === 202 && o.at >= down && o.at <= up);
  const a = await awaitDelivery({
    knex: ctx.deps.knex,
    acked,
    requests: stack.receiver.requests,
    routePath: '/hook',
    timeoutMs: 60_000,
    log,
  });
  problems.push(...accountProblems(a));
  const leads = outcomes.filter((o) => o.lane === 'keyed' && o.status === 201).map((o) => o.ref);
  const stored = new Set(
    (
      (await ctx.deps
        .knex('leads')
        .whereIn('email', leads as string[])
        .select('email')) as Array<{
        email: string;
      }>
    ).map((r) => r.email),
  );
  const missingLeads = leads.filter((e) => !stored.has(e as string));
  if (missingLeads.length) problems.push(`${missingLeads.length} acked (201) lead(s) not stored`);
  if (problems.length && process.env.CHAOS_API_LOG_LEVEL) log(stack.api.stderr());
  const worker = stack.worker.process;
  if (worker.exitCode !== null || worker.signalCode !== null)
    problems.push(`the worker process exited (${worker.exitCode ?? worker.signalCode})`);
  figures.push(
    ['events acked (202)', `${a.acked}, ${ackedDuring.length} of them during the outage`],
    ['events delivered', a.acked - a.undelivered.length - a.uncommitted.length],
    ['lost', a.undelivered.length + a.uncommitted.length],
    ['all delivered after the return', a.undelivered.length ? 'no' : secs(Date.now() - up)],
    [
      'keyed writes acked (201) / stored',
      `${leads.length} / ${leads.length - missingLeads.length}`,
    ],
  );
  return { figures, problems };
}
