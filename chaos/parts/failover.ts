import type { ChaosPart, PartResult } from '../part';
import { accountProblems, ackedRefs, awaitDelivery } from '../harness/accounting';
import { lane, percentile, tally, type Outcome } from '../harness/client';
import { intEnv, secs } from '../harness/env';
import {
  awaitWritesBack,
  describeBack,
  rejoinPg,
  rejoinRedis,
  slowest,
} from '../harness/failover-phases';
import { startHaSet, type HaSet } from '../harness/ha-set';
import { accountKeys, keyedLane } from '../harness/keyed';
import { callSubscriber, startStack, type Stack } from '../harness/stack';

/** Goals (issue 45): writes succeed again this soon after a kill. */
const GOAL_MS = { postgres: 30_000, redis: 15_000 };
/** Every lane writes; ingestion needs Postgres alone, so a Redis failover should spare it. */
const WRITE_LANES = ['ingest', 'outbound', 'sms'];

interface Kill {
  name: string;
  /** The fault's first kill. */
  at: number;
  goalMs: number;
  back: Record<string, number | null>;
  rejoined: string[];
}

function startLoad(stack: Stack<HaSet>, world: { auth: string; rcp: string }) {
  const outcomes: Outcome[] = [];
  const api = stack.api.baseUrl;
  const lanes = [
    ...[1, 2, 3].map(() => lane(outcomes, () => stack.ingest(world.rcp, 'ingest'), 100)),
    ...[1, 2].map(() =>
      keyedLane(outcomes, {
        lane: 'outbound',
        url: `${api}/api/v1/calls/outbound`,
        auth: world.auth,
        body: () => ({ receptionist_id: world.rcp, to: '+14155550123', customer_name: 'Dana' }),
        paceMs: 200,
      }),
    ),
    keyedLane(outcomes, {
      lane: 'sms',
      url: `${api}/api/v1/sms/send`,
      auth: world.auth,
      body: (key) => ({ receptionist_id: world.rcp, to: '+14155550142', message: `Hi ${key}` }),
      paceMs: 200,
    }),
  ];
  return { outcomes, stop: async () => void (await Promise.all(lanes.map((l) => l.stop()))) };
}

/**
 * Failovers under load on the set of scripts/ha/start.sh (docs/SCALING.md): the API and a
 * worker as real processes on HAProxy and the Sentinels; call ingestion, outbound calls and
 * SMS sends with Idempotency-Keys (retried with the same key, as a client does), and the
 * `call.started` deliveries to a receiver on 127.0.0.1. Three faults, each followed by the
 * restart of what was killed: the Postgres leader (Patroni and its Postgres, SIGKILL), the
 * Redis primary (SIGKILL), then both `gapMs` apart. Rules: no 5xx but a 503 with
 * Retry-After, no request without an answer; every acknowledged write in Postgres, once;
 * every acknowledged event delivered; writes come back after each kill; each killed member
 * rejoins as a replica. Times against the goals are figures.
 */
export async function runFailover(opts: {
  gapMs: number;
  log(line: string): void;
}): Promise<PartResult> {
  const { log } = opts;
  // event id → when each copy arrived: a duplicate must be an attempt in flight at a kill.
  const arrivals = new Map<string, number[]>();
  const stack = await startStack<HaSet>({
    routes: {
      '/hook': (req, res) => {
        const id = String(req.headers['x-service-event-id']);
        arrivals.set(id, [...(arrivals.get(id) ?? []), Date.now()]);
        res.writeHead(200).end();
      },
    },
    servers: () => startHaSet(log),
    apiEnv: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' },
  });
  const set = stack.servers;
  const problems: string[] = [];
  const kills: Kill[] = [];
  try {
    const { tenant, receptionistId } = await callSubscriber(stack, stack.hookUrl('/hook'));
    const load = startLoad(stack, { auth: tenant.auth, rcp: receptionistId });
    const { outcomes } = load;
    try {
      const warm = Date.now();
      await awaitWritesBack(outcomes, WRITE_LANES, warm, 3000);
      const pgFault = async () => {
        const leader = await set.pgLeader();
        if (!leader) throw new Error('no Postgres leader');
        log(`  SIGKILL of the Postgres leader ${leader.name} (Patroni and Postgres)`);
        set.killPg(leader);
        return leader.name;
      };
      const redisFault = async () => {
        const port = await set.redisPrimary();
        log(`  SIGKILL of the Redis primary ${port}`);
        set.killRedis(port);
        return port;
      };
      const phase = async (
        name: string,
        goalMs: number,
        lanes: string[],
        fault: () => Promise<string[]>,
      ) => {
        const at = Date.now();
        const victims = await fault();
        const back = await awaitWritesBack(outcomes, lanes, at);
        log(`  ${name}: writes back (${describeBack(back)})`);
        const rejoined: string[] = [];
        for (const v of victims) {
          const [line, ok] = await (v.startsWith('pg')
            ? rejoinPg(set, v)
            : rejoinRedis(set, Number(v)));
          log(`  ${line}`);
          rejoined.push(line);
          if (!ok) problems.push(`${name}: ${line}`);
        }
        kills.push({ name, at, goalMs, back, rejoined });
      };
      await phase('Postgres leader killed', GOAL_MS.postgres, WRITE_LANES, async () => [
        await pgFault(),
      ]);
      await phase('Redis primary killed', GOAL_MS.redis, WRITE_LANES, async () => [
        String(await redisFault()),
      ]);
      await phase(
        `both killed ${secs(opts.gapMs)} apart`,
        GOAL_MS.postgres,
        WRITE_LANES,
        async () => {
          const pg = await pgFault();
          await new Promise((r) => setTimeout(r, opts.gapMs));
          return [pg, String(await redisFault())];
        },
      );
      await new Promise((r) => setTimeout(r, 2000));
    } finally {
      await load.stop();
    }
    return await verdict(stack, tenant.tenantId, { outcomes, kills, arrivals }, problems, log);
  } finally {
    await stack.destroy();
  }
}

async function verdict(
  stack: Stack<HaSet>,
  tenantId: string,
  run: { outcomes: Outcome[]; kills: Kill[]; arrivals: Map<string, number[]> },
  problems: string[],
  log: (line: string) => void,
): Promise<PartResult> {
  const { knex } = stack.servers.ctx.deps;
  const { outcomes, kills } = run;
  const count = (pred: (o: Outcome) => boolean) => outcomes.filter(pred).length;
  const example = (pred: (o: Outcome) => boolean) => {
    const o = outcomes.find(pred);
    return o ? `${o.lane} ${o.status || o.error} in ${o.ms} ms` : '';
  };
  const rules: Array<[string, (o: Outcome) => boolean]> = [
    ['500 answer(s)', (o) => o.status === 500],
    ['5xx answer(s) other than 500 and 503', (o) => o.status > 500 && o.status !== 503],
    ['503(s) without Retry-After', (o) => o.status === 503 && !o.retryAfter],
    ['request(s) without an answer', (o) => o.status === 0],
  ];
  for (const [what, pred] of rules) {
    const n = count(pred);
    if (n) problems.push(`${n} ${what}, e.g. ${example(pred)}`);
  }
  const figures: PartResult['figures'] = [];
  for (const k of kills) {
    const worst = slowest(k.back);
    const verdict = worst <= k.goalMs ? 'within' : 'OVER';
    figures.push([
      `${k.name}: writes back`,
      `${describeBack(k.back)} (${verdict} the goal ${secs(k.goalMs)})`,
    ]);
    if (worst === Infinity) problems.push(`${k.name}: writes never came back`);
    figures.push([`${k.name}: rejoined`, k.rejoined.join('; ')]);
  }
  figures.push(['requests', `${outcomes.length}: ${tally(outcomes)}`]);
  figures.push(['500 answers', count((o) => o.status === 500)]);
  figures.push([
    '503 answers (all with Retry-After)',
    `${count((o) => o.status === 503)} (${count((o) => o.status === 503 && !o.retryAfter) ? 'no' : 'yes'})`,
  ]);
  figures.push([
    'slowest answer, p99',
    `${Math.max(...outcomes.map((o) => o.ms))} ms, ${percentile(
      outcomes.map((o) => o.ms),
      99,
    )} ms`,
  ]);

  for (const [name, table] of [
    ['outbound', 'calls'],
    ['sms', 'sms_messages'],
  ] as const) {
    const a = await accountKeys(
      knex,
      table,
      tenantId,
      outcomes.filter((o) => o.lane === name),
    );
    if (a.lost.length)
      problems.push(`${a.lost.length} acknowledged ${name} key(s) not stored, e.g. ${a.lost[0]}`);
    if (a.duplicated.length)
      problems.push(
        `${a.duplicated.length} ${name} key(s) stored or answered twice, e.g. ${a.duplicated[0]}`,
      );
    figures.push([
      `${name} keys: acked / lost / duplicated / given up`,
      `${a.acked} / ${a.lost.length} / ${a.duplicated.length} / ${a.unresolved}`,
    ]);
  }
  const acked = ackedRefs(outcomes.filter((o) => o.lane === 'ingest'));
  const a = await awaitDelivery({
    knex,
    acked,
    requests: stack.receiver.requests,
    routePath: '/hook',
    timeoutMs: 180_000,
    log,
  });
  problems.push(...accountProblems(a));
  // In flight at a kill: its first copy arrived between 5 s before a kill and 5 s after
  // writes came back (the worker could not record the answer, and sent it again).
  const windows = kills.map((k) => [k.at - 5000, k.at + slowest(k.back) + 5000] as const);
  const unexplained = [...run.arrivals.values()]
    .filter((times) => times.length > 1)
    .filter(
      ([first]) =>
        !windows.some(([from, to]) => (first as number) >= from && (first as number) <= to),
    );
  if (unexplained.length)
    problems.push(
      `${unexplained.length} event(s) delivered twice with no kill near their first copy`,
    );
  figures.push(
    ['ingested events acked (202)', a.acked],
    ['lost (not committed / not delivered)', `${a.uncommitted.length} / ${a.undelivered.length}`],
    [
      'duplicate deliveries',
      `${a.duplicates}, ${unexplained.length} of them not in flight at a kill`,
    ],
  );
  const apiUp = await Promise.race([stack.api.exited.then(() => false), Promise.resolve(true)]);
  if (!apiUp) problems.push('the API process exited');
  const worker = stack.worker.process;
  if (worker.exitCode !== null || worker.signalCode !== null)
    problems.push(`the worker process exited (${worker.exitCode ?? worker.signalCode})`);
  return { figures, problems };
}

export const failoverPart: ChaosPart = {
  description:
    'Postgres leader, Redis primary, then both SIGKILLed on the HA set under load: nothing lost',
  run: ({ log }) => runFailover({ gapMs: intEnv('CHAOS_FAILOVER_GAP_MS', 2000), log }),
};
