import type { ChaosPart, PartResult } from '../part';
import { accountProblems, ackedRefs, awaitDelivery } from '../harness/accounting';
import { pool, send, tally, type Outcome } from '../harness/client';
import { intEnv, secs } from '../harness/env';
import { callSubscriber, startStack } from '../harness/stack';

export interface ApiSigtermOptions {
  requests: number;
  concurrency: number;
  log(line: string): void;
}

/** A connection the old process refused: the request never reached it, so it is retried. */
const NOT_ACCEPTED = new Set(['ECONNREFUSED']);

/** How often the balancer asks each API process's /readyz, as a load balancer would. */
const PROBE_MS = 250;

/**
 * API SIGTERM during a burst, as in a rolling deploy: two API processes on the same servers
 * behind a balancer that sends each request to the first while its /readyz says ready
 * (probed every PROBE_MS), else to the second. `requests` ingestion messages are sent,
 * `concurrency` at a time (keep-alive); the first process gets SIGTERM a third of the way
 * through. Every request it accepted must be answered 202 (no reset, no 5xx); a refused
 * connection (never accepted) is retried on the second; every 202 is delivered.
 */
export async function runApiSigterm(opts: ApiSigtermOptions): Promise<PartResult> {
  const { requests, concurrency, log } = opts;
  // The production grace period: /readyz fails and connections close before the listener does.
  const stack = await startStack({
    routes: { '/hook': (_q, res) => res.writeHead(200).end() },
    apiEnv: { SHUTDOWN_GRACE_MS: '2000' },
  });
  try {
    const { receptionistId } = await callSubscriber(stack, stack.hookUrl('/hook'));
    const old = stack.api;
    const next = await stack.startApi();
    let oldGone = false;
    let signalledAt = 0;
    let outOfRotationAt = 0;
    let probing = true;
    const prober = (async () => {
      while (probing && !oldGone) {
        const ready = await send(`${old.baseUrl}/readyz`, { lane: 'probe' });
        if (ready.status !== 200 && signalledAt) {
          oldGone = true;
          outOfRotationAt = Date.now();
        }
        await new Promise((r) => setTimeout(r, PROBE_MS));
      }
    })();
    const outcomes: Outcome[] = [];
    let retried = 0;
    let answered = 0;
    const exited = old.exited.then((code) => ({ code, ms: Date.now() - signalledAt }));
    await pool(requests, concurrency, async () => {
      for (let tries = 0; tries < 5; tries++) {
        const target = oldGone ? next : old;
        const o = await stack.ingest(
          receptionistId,
          target === old ? 'old' : 'new',
          target.baseUrl,
        );
        if (target === old && o.status === 0 && NOT_ACCEPTED.has(o.error ?? '')) {
          oldGone = true;
          retried++;
          continue;
        }
        outcomes.push(o);
        if (++answered === Math.floor(requests / 3)) {
          signalledAt = Date.now();
          log(`  SIGTERM to the API after ${answered} answers`);
          old.signal('SIGTERM');
        }
        return;
      }
    });
    probing = false;
    await prober;
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      exited,
      new Promise<null>((r) => (timer = setTimeout(() => r(null), 30_000))),
    ]).finally(() => clearTimeout(timer));
    const problems: string[] = [];
    const failed = outcomes.filter((o) => o.status !== 202);
    if (failed.length) {
      const o = failed[0] as Outcome;
      problems.push(
        `${failed.length} accepted request(s) not answered 202: ${tally(failed)}, e.g. ${o.lane} ${o.status || o.error} ${o.at - signalledAt} ms after SIGTERM`,
      );
    }
    if (!signalledAt) problems.push('the SIGTERM was never sent');
    if (!exit) problems.push('the API did not exit within 30 s of SIGTERM');
    else if (exit.code !== 0) problems.push(`the API exited ${exit.code}`);
    const acked = ackedRefs(outcomes);
    const a = await awaitDelivery({
      knex: stack.servers.ctx.deps.knex,
      acked,
      requests: stack.receiver.requests,
      routePath: '/hook',
      timeoutMs: 60_000,
      log,
    });
    problems.push(...accountProblems(a));
    const afterSignal = outcomes.filter((o) => o.lane === 'old' && o.at >= signalledAt);
    return {
      figures: [
        ['requests', `${requests}, ${concurrency} at a time`],
        ['answered by the stopping API', `${tally(outcomes.filter((o) => o.lane === 'old'))}`],
        ['of them sent after its SIGTERM', afterSignal.length],
        [
          'out of rotation after SIGTERM',
          outOfRotationAt ? secs(outOfRotationAt - signalledAt) : 'never (refused first)',
        ],
        ['refused by it, retried on the next', retried],
        ['answered by the next API', `${tally(outcomes.filter((o) => o.lane === 'new'))}`],
        [
          'resets / 5xx',
          `${failed.filter((o) => !o.status).length} / ${failed.filter((o) => o.status >= 500).length}`,
        ],
        ['SIGTERM to exit', exit ? `${secs(exit.ms)} (exit code ${exit.code})` : 'no exit'],
        [
          'events acked (202) / delivered',
          `${a.acked} / ${a.acked - a.undelivered.length - a.uncommitted.length}`,
        ],
        ['lost', a.undelivered.length + a.uncommitted.length],
      ],
      problems,
    };
  } finally {
    await stack.destroy();
  }
}

export const apiSigtermPart: ChaosPart = {
  description: 'API SIGTERM during a burst: every accepted request answered, none lost',
  run: ({ log }) =>
    runApiSigterm({ requests: intEnv('CHAOS_REQUESTS', 2000), concurrency: 32, log }),
};
