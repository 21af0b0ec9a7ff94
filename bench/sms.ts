/**
 * SMS (issue 12): `npm run bench:sms`.
 *
 * 1. Send: POST /api/v1/sms/send with a unique Idempotency-Key per request against
 *    POST /api/v1/calls/outbound (the same machinery) in the same run, on one API process
 *    and a fresh database `switchboard_bench_sms_send`, in rotating rounds (medians). No
 *    worker runs. Goal: SMS req/s ≥ 0.9 × outbound-call req/s.
 * 2. History: seeds `switchboard_bench_sms` once (COPY, with progress; reused while it holds
 *    the same seed) with a receptionist of 1,000,020 messages among four others of 50,000,
 *    then page latency of GET /api/v1/receptionists/{id}/sms?limit=20 at cursor depths 0,
 *    10k, 100k and 1M, plus EXPLAIN (ANALYZE, BUFFERS) at 1M. Goal: p50 at 1M ≤ 1.2 × p50
 *    at 0.
 * 3. Prints the figures and writes bench/.results/sms-<timestamp>.json.
 *
 * Knobs (env): BENCH_DURATION (10 s), BENCH_CONNECTIONS (10), BENCH_ROUNDS (3),
 * BENCH_SAMPLES (200), BENCH_SMS_MESSAGES (1,000,020: a smaller seed for a smoke run; deeper
 * depths are skipped), BENCH_RESEED=1, BENCH_ADMIN_DATABASE_URL, REDIS_URL.
 */
import { closeRedis, createQueues, createRedis } from '@switchboard/queues';
import { installChildCleanup, stopAllChildren } from './lib/children';
import { closeHttpAgent } from './lib/http';
import { envInt } from './lib/env';
import { machineInfo } from './lib/machine';
import { log, step } from './lib/progress';
import { saveResult } from './lib/results';
import { median, table } from './lib/stats';
import { deleteRedisPrefix } from './outbound/setup';
import { measureHistory } from './sms/history';
import { ensureSmsSeed, type SmsSeedSpec } from './sms/seed';
import { measureSend, stopSendLoad, type Route } from './sms/send';

const PREFIX = '{sbbs}';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SPEC: SmsSeedSpec = {
  version: 1,
  bigReceptionist: envInt('BENCH_SMS_MESSAGES', 1_000_020),
  otherReceptionists: 50_000,
  others: 4,
  prngSeed: 20261123,
};
const PAGE = 20;
const DEPTHS = [0, 10_000, 100_000, 1_000_000].filter((d) => d + PAGE <= SPEC.bigReceptionist);
const SEND_TARGET = 0.9;
const DEPTH_TARGET = 1.2;

const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';

async function main(): Promise<number> {
  installChildCleanup(stopSendLoad);
  const startedAt = new Date();
  const machine = machineInfo();
  log(
    `sms benchmark: nproc ${machine.nproc}, node ${machine.node}, load ${machine.loadavg.join(' ')}`,
  );
  const redis = createRedis(REDIS_URL, 'worker');
  const queues = createQueues(redis, PREFIX);
  try {
    await deleteRedisPrefix(redis, PREFIX);
    const send = await measureSend({
      database: 'switchboard_bench_sms_send',
      redisUrl: REDIS_URL,
      prefix: PREFIX,
      queues,
      rounds: envInt('BENCH_ROUNDS', 3),
      durationS: envInt('BENCH_DURATION', 10),
      warmupS: 2,
      connections: envInt('BENCH_CONNECTIONS', 10),
    });
    const seed = await step('history seed', () =>
      ensureSmsSeed('switchboard_bench_sms', SPEC, process.env.BENCH_RESEED === '1'),
    );
    const history = await measureHistory(seed, {
      depths: DEPTHS,
      walkTo: DEPTHS.find((d) => d > 0) ?? 0,
      page: PAGE,
      samples: envInt('BENCH_SAMPLES', 200),
      warmup: 20,
    });

    const med = (
      r: Route,
      f: 'requestsPerSecond' | 'p50' | 'p99' | 'cpuMsServer' | 'cpuMsPostgres',
    ) => median(send.runs[r].map((x) => x[f]));
    const deepest = Math.max(...DEPTHS);
    const report = [
      '',
      'SMS benchmark (issue 12)',
      `machine: ${machine.nproc} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}; load before: ${machine.loadavg.join(' ')}`,
      '',
      'Send, unique Idempotency-Keys, medians of rotating rounds:',
      table([
        [
          'route',
          'req/s',
          'p50 ms',
          'p99 ms',
          'CPU ms/req api',
          'CPU ms/req pg',
          'req/s per round',
        ],
        ...(
          [
            ['POST /sms/send', 'sms'],
            ['POST /calls/outbound', 'call'],
          ] as const
        ).map(([label, r]) => [
          label,
          fmt(med(r, 'requestsPerSecond')),
          fmt(med(r, 'p50')),
          fmt(med(r, 'p99')),
          fmt(med(r, 'cpuMsServer'), 3),
          fmt(med(r, 'cpuMsPostgres'), 3),
          send.runs[r].map((x) => fmt(x.requestsPerSecond)).join(' / '),
        ]),
      ]),
      `sms / outbound: ${fmt(send.ratio, 2)} × (target ≥ ${SEND_TARGET}: ${send.ratio >= SEND_TARGET ? 'MET' : 'MISSED'}); median of the per-round ratios ${fmt(send.pairedRatio, 2)} ×`,
      `checked: ${fmt(send.checked.messages)} messages, ${fmt(send.checked.smsJobs)} send jobs; ${fmt(send.checked.calls)} calls, ${fmt(send.checked.dialJobs)} dial jobs (a job not added within the request's bound is the reconciler's)`,
      '',
      `History, GET /receptionists/{id}/sms?limit=${PAGE}, sequential requests over one connection${seed.skipped ? ' (seed reused)' : ''}:`,
      table([
        ['depth', 'cursor from', 'p50 ms', 'p90 ms', 'p99 ms', 'samples'],
        ...history.depths.map((d) => [
          fmt(d.depth),
          d.cursorFrom,
          fmt(d.http.p50, 2),
          fmt(d.http.p90, 2),
          fmt(d.http.p99, 2),
          String(d.http.samples),
        ]),
      ]),
      `p50 depth ${fmt(deepest)} / depth 0: ${fmt(history.ratio, 2)} × (target ≤ ${DEPTH_TARGET}: ${history.ratio <= DEPTH_TARGET ? 'MET' : 'MISSED'})`,
      `plan at depth ${fmt(deepest)}: order index ${history.planChecks.usesOrderIndex ? 'used' : 'NOT used'}, ${history.planChecks.hasSortNode ? 'a sort node' : 'no sort node'}`,
      history.plan,
    ];
    process.stdout.write(`${report.join('\n')}\n`);

    const result = {
      benchmark: 'sms',
      command: 'npm run bench:sms',
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      seed: { spec: SPEC, reused: seed.skipped },
      send,
      history,
      targets: {
        send: { ratio: send.ratio, goal: SEND_TARGET, met: send.ratio >= SEND_TARGET },
        history: { ratio: history.ratio, goal: DEPTH_TARGET, met: history.ratio <= DEPTH_TARGET },
      },
    };
    saveResult('sms', startedAt, result, log);
    return 0;
  } finally {
    await stopAllChildren();
    closeHttpAgent();
    await deleteRedisPrefix(redis, PREFIX).catch(() => undefined);
    await queues.close();
    await closeRedis(redis);
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(
      `\nsms benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    await stopAllChildren();
    process.exit(1);
  },
);
