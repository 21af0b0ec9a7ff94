/**
 * Outbound calls (issue 6): `npm run bench:outbound`.
 *
 * 1. Recreates `switchboard_bench_outbound`: migrated, one tenant, a write key, a ready
 *    receptionist.
 * 2. Starts the real API and the bare Express 5 baseline (bench/outbound/bare-server.ts) as
 *    child processes. No worker runs: dial jobs only pile up in Redis, so the dialler takes
 *    no CPU and only the API path is measured.
 * 3. Throughput with autocannon, in rotating rounds (medians reported):
 *    - POST /api/v1/calls/outbound with a unique Idempotency-Key per request (each creates a
 *      call: marker, receptionist read, insert, dial job, stored response);
 *    - the same with keys from a pool already used (every request is a Redis replay);
 *    - the bare route: JSON body, one SET NX PX and one GET.
 * 4. Checks the outcome (one call row and one dial job per unique key, no non-2xx), prints
 *    the ratios to the bare route, writes bench/.results/outbound-<timestamp>.json.
 *
 * Knobs (env): BENCH_DURATION (10 s), BENCH_CONNECTIONS (10), BENCH_ROUNDS (3),
 * BENCH_REPLAY_KEYS (200), REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { createKnex } from '@switchboard/db';
import { closeRedis, createQueues, createRedis } from '@switchboard/queues';
import { runCannon, stopCannon } from './lib/cannon';
import { installChildCleanup, startTsChild, stopAllChildren, waitForHttp } from './lib/children';
import { freePort } from './lib/http';
import { envInt, UNLIMITED_API_RATE } from './lib/env';
import { machineInfo } from './lib/machine';
import { cpuSnapshot } from './lib/proc';
import { log, step } from './lib/progress';
import { saveResult } from './lib/results';
import { median, table } from './lib/stats';
import { deleteRedisPrefix, setupDatabase } from './outbound/setup';
import { compileForBench, serviceEntry } from './lib/compiled';

/** The bare reference (compiled with the services: ./lib/compiled.ts). */
const BARE_SERVER = 'bench/outbound/bare-server.ts';

const DURATION_S = envInt('BENCH_DURATION', 10);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 10);
const ROUNDS = envInt('BENCH_ROUNDS', 3);
const REPLAY_KEYS = envInt('BENCH_REPLAY_KEYS', 200);
const WARMUP_S = 2;
const TARGET_RATIO = 0.5;
const PREFIX = '{sbbo}';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PATH = '/api/v1/calls/outbound';

type Config = 'bare' | 'unique' | 'replay';
interface Run {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  ok: number;
  /** CPU milliseconds per request in the server process and in all of Postgres. */
  cpuMsServer: number;
  cpuMsPostgres: number;
}

const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';

/** One autocannon run; `nextKey` gives each request its Idempotency-Key. */
function cannon(
  title: string,
  target: { base: string; path: string; headers: Record<string, string>; body: string },
  nextKey: () => string,
  duration: number,
): Promise<autocannon.Result> {
  return runCannon(
    title,
    {
      url: target.base,
      connections: CONNECTIONS,
      requests: [
        {
          method: 'POST',
          path: target.path,
          headers: target.headers,
          body: target.body,
          setupRequest: (req) => ({
            ...req,
            headers: { ...req.headers, 'idempotency-key': nextKey() },
          }),
        },
      ],
    },
    duration,
    40,
  );
}

async function main(): Promise<number> {
  installChildCleanup(stopCannon);
  const startedAt = new Date();
  const machine = machineInfo();
  log(`outbound benchmark: nproc ${machine.nproc}, node ${machine.node}`);
  if ((machine.loadavg[0] ?? 0) > 0.5) {
    log(`  note: load average is ${machine.loadavg.join(' ')}: the figures will be noisy`);
  }
  const setup = await step('recreating the bench database', setupDatabase);
  // The bench's own connection (setup, checks, cleanup) may wait for Redis: worker settings.
  const redis = createRedis(REDIS_URL, 'worker');
  const queues = createQueues(redis, PREFIX);
  const knex = createKnex(setup.benchUrl, { poolMax: 2 });
  try {
    await redis.ping();
    const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
    const pgVersion = (
      (await knex.raw('SHOW server_version')) as { rows: { server_version: string }[] }
    ).rows[0]?.server_version;
    await deleteRedisPrefix(redis, PREFIX);

    const [apiPort, barePort] = [await freePort(), await freePort()];
    const compiled = await compileForBench([BARE_SERVER]);
    const api = startTsChild('api', serviceEntry('apps/api/dist/server.js'), {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: setup.benchUrl,
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      PORT: String(apiPort),
      LOG_LEVEL: 'warn',
      INGEST_TOKEN: randomBytes(24).toString('hex'),
      CURSOR_SECRET: randomBytes(24).toString('hex'),
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ...UNLIMITED_API_RATE,
    });
    const bare = startTsChild('bare-server', compiled[BARE_SERVER] ?? BARE_SERVER, {
      ...process.env,
      NODE_ENV: 'production',
      REDIS_URL,
      BENCH_REDIS_PREFIX: PREFIX,
      PORT: String(barePort),
    });
    const apiBase = `http://127.0.0.1:${apiPort}`;
    const bareBase = `http://127.0.0.1:${barePort}`;
    await step('starting the API and the bare server', () =>
      Promise.all([
        waitForHttp(api, `${apiBase}/healthz`),
        waitForHttp(bare, `${bareBase}/healthz`),
      ]),
    );

    const body = JSON.stringify({
      receptionist_id: setup.receptionistId,
      to: '+14155550123',
      customer_name: 'Bench Customer',
      metadata: { source: 'benchmark' },
    });
    const headers = {
      authorization: `Bearer ${setup.apiKey}`,
      'content-type': 'application/json',
    };
    // The replay pool: each key used once now, so every later request with it is a replay.
    await step(`using ${REPLAY_KEYS} keys once (the replay pool)`, async () => {
      for (let i = 0; i < REPLAY_KEYS; i++) {
        const key = { 'idempotency-key': `replay-${i}` };
        const res = await fetch(`${apiBase}${PATH}`, {
          method: 'POST',
          headers: { ...headers, ...key },
          body,
        });
        if (res.status !== 202) throw new Error(`setup POST → ${res.status}: ${await res.text()}`);
      }
      const again = await fetch(`${apiBase}${PATH}`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': 'replay-0' },
        body,
      });
      if (again.headers.get('idempotent-replayed') !== 'true') {
        throw new Error('a repeated key was not answered as a replay');
      }
    });

    const run = randomBytes(4).toString('hex');
    let counter = 0;
    const targets: Record<Config, { base: string; path: string; nextKey: () => string }> = {
      bare: { base: bareBase, path: '/idem', nextKey: () => `b-${run}-${counter++}` },
      unique: { base: apiBase, path: PATH, nextKey: () => `u-${run}-${counter++}` },
      replay: { base: apiBase, path: PATH, nextKey: () => `replay-${counter++ % REPLAY_KEYS}` },
    };
    const runs: Record<Config, Run[]> = { bare: [], unique: [], replay: [] };
    let uniqueAccepted = 0;
    const order: Config[] = ['bare', 'unique', 'replay'];
    for (let round = 1; round <= ROUNDS; round++) {
      for (let k = 0; k < order.length; k++) {
        const config = order[(round - 1 + k) % order.length] as Config;
        const t = targets[config];
        const target = { ...t, headers, body };
        const server = config === 'bare' ? bare : api;
        const warm = await cannon(`${config} #${round}: warmup`, target, t.nextKey, WARMUP_S);
        const before = cpuSnapshot(server.proc.pid);
        const r = await cannon(`${config} #${round}`, target, t.nextKey, DURATION_S);
        const after = cpuSnapshot(server.proc.pid);
        const perRequest = (a = Number.NaN, b = Number.NaN) =>
          ((b - a) * 1000) / Math.max(1, r.requests.total);
        for (const res of [warm, r]) {
          if (res.non2xx > 0 || res.errors > 0 || res.timeouts > 0) {
            throw new Error(
              `${config}: ${res.non2xx} non-2xx, ${res.errors} errors, ${res.timeouts} timeouts`,
            );
          }
          if (config === 'unique') uniqueAccepted += res['2xx'];
        }
        runs[config].push({
          requestsPerSecond: r.requests.average,
          p50: r.latency.p50,
          p99: r.latency.p99,
          ok: r['2xx'],
          cpuMsServer: perRequest(before?.group, after?.group),
          cpuMsPostgres: perRequest(before?.postgres, after?.postgres),
        });
      }
    }

    // Every unique key made exactly one call and one dial job; replays made none. Requests
    // still in flight when a run stops are not counted by autocannon but do create calls.
    const [{ n }] = (await knex('calls').count({ n: '*' })) as [{ n: string }];
    const calls = Number(n);
    const jobs = await queues.outboundCalls.getJobCountByTypes('waiting', 'delayed', 'prioritized');
    const expected = REPLAY_KEYS + uniqueAccepted;
    const inFlight = 2 * CONNECTIONS * ROUNDS;
    if (calls !== jobs || calls < expected || calls > expected + inFlight) {
      throw new Error(
        `expected ${expected} (+ up to ${inFlight} in flight) calls and as many dial jobs, found ${calls} and ${jobs}`,
      );
    }

    const med = (c: Config, f: keyof Run) => median(runs[c].map((r) => r[f]));
    const uniqueRatio = med('unique', 'requestsPerSecond') / med('bare', 'requestsPerSecond');
    const replayRatio = med('replay', 'requestsPerSecond') / med('bare', 'requestsPerSecond');
    const met = uniqueRatio >= TARGET_RATIO;
    const report = [
      '',
      'Outbound calls benchmark (issue 6)',
      `machine: ${machine.nproc} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}, PostgreSQL ${pgVersion}, Redis ${redisVersion}; load before: ${machine.loadavg.join(' ')}`,
      `autocannon: ${CONNECTIONS} connections, ${DURATION_S} s after a ${WARMUP_S} s warmup, ${ROUNDS} rotating rounds, medians; no worker running`,
      table([
        [
          'route',
          'req/s',
          'p50 ms',
          'p99 ms',
          'CPU ms/req server',
          'CPU ms/req pg',
          'req/s per round',
        ],
        ...(
          [
            ['API  POST /calls/outbound, unique keys', 'unique'],
            ['API  POST /calls/outbound, replays', 'replay'],
            ['bare POST /idem (SET NX PX + GET)', 'bare'],
          ] as const
        ).map(([label, c]) => [
          label,
          fmt(med(c, 'requestsPerSecond')),
          fmt(med(c, 'p50')),
          fmt(med(c, 'p99')),
          fmt(med(c, 'cpuMsServer'), 3),
          fmt(med(c, 'cpuMsPostgres'), 3),
          runs[c].map((r) => fmt(r.requestsPerSecond)).join(' / '),
        ]),
      ]),
      '',
      `unique-key / bare: ${fmt(uniqueRatio, 2)} × (target ≥ ${TARGET_RATIO}: ${met ? 'MET' : 'MISSED'})`,
      `replay / bare:     ${fmt(replayRatio, 2)} ×`,
      `non-2xx answers: 0 of ${fmt(
        Object.values(runs)
          .flat()
          .reduce((n, r) => n + r.ok, 0),
      )} measured (the measured key's limit is lifted; a run with any fails)`,
      `checked: ${fmt(calls)} calls and ${fmt(jobs)} dial jobs, one per distinct key (${fmt(expected)} answered + ${fmt(calls - expected)} in flight at the end of runs)`,
    ];
    process.stdout.write(`${report.join('\n')}\n`);

    const result = {
      benchmark: 'outbound',
      command: 'npm run bench:outbound',
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      versions: { postgres: pgVersion, redis: redisVersion },
      settings: {
        connections: CONNECTIONS,
        durationSeconds: DURATION_S,
        warmupSeconds: WARMUP_S,
        rounds: ROUNDS,
        replayKeys: REPLAY_KEYS,
      },
      runs,
      ratios: { unique: Number(uniqueRatio.toFixed(3)), replay: Number(replayRatio.toFixed(3)) },
      target: { description: `unique-key req/s ≥ ${TARGET_RATIO} × bare`, met },
      checked: { calls, jobs, expected },
    };
    saveResult('outbound', startedAt, result, log);
    return 0;
  } finally {
    await stopAllChildren();
    await deleteRedisPrefix(redis, PREFIX).catch(() => undefined);
    await queues.close();
    await closeRedis(redis);
    await knex.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(
      `\noutbound benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    await stopAllChildren();
    process.exit(1);
  },
);
