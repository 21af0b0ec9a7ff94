/**
 * Usage metering (issue 11): `npm run bench:usage`.
 *
 * 1. Seeds `switchboard_bench_usage` (once; reused while it matches): a tenant with
 *    1,000,000 calls ending in one month and one with 1,000, by COPY, counted by migration
 *    008's own aggregation, among 10,000 other tenants with counters.
 * 2. Starts the real API as a child process (no worker).
 * 3. GET /api/v1/usage?period=<that month> for the big and the small tenant, interleaved;
 *    goal: p50 big / small ≤ 1.5 (the read does not scan calls). Plus the read's EXPLAIN.
 * 4. call.ended ingestion req/s with metering (the call ends completed and is counted) vs the
 *    same message ending `voicemail` (every statement but the metering one), in rotating
 *    rounds: all calls on one tenant (whose period row every completion updates), then
 *    spread over 50 tenants; goal: metered / baseline ≥ 0.9. Checks that every completed
 *    call was counted once.
 * 5. Prints a table and writes bench/.results/usage-<timestamp>.json.
 *
 * Knobs (env): BENCH_USAGE_CALLS (1000000), BENCH_RESEED=1, BENCH_SAMPLES (300),
 * BENCH_DURATION (10 s), BENCH_CONNECTIONS (10), BENCH_ROUNDS (3), BENCH_DATABASE_NAME.
 */
import { randomBytes } from 'node:crypto';
import { createKnex } from '@switchboard/db';
import { installChildCleanup, startTsChild, stopAllChildren, waitForHttp } from './lib/children';
import { closeHttpAgent, freePort } from './lib/http';
import { envInt, UNLIMITED_API_RATE } from './lib/env';
import { machineInfo } from './lib/machine';
import { log, step } from './lib/progress';
import { saveResult } from './lib/results';
import { median, table } from './lib/stats';
import {
  checkCounted,
  ingestTenants,
  measureIngest,
  stopIngest,
  type IngestMode,
  type IngestRun,
} from './usage/ingest';
import { explainRead, measureReads } from './usage/read';
import { ensureUsageSeed, type UsageSeedSpec } from './usage/seed';
import { compileForBench, serviceEntry } from './lib/compiled';

const SPEC: UsageSeedSpec = {
  version: 2,
  bigCalls: envInt('BENCH_USAGE_CALLS', 1_000_000),
  smallCalls: 1_000,
  receptionists: 20,
  otherTenants: 10_000,
};
const SAMPLES = envInt('BENCH_SAMPLES', 300);
const DURATION_S = envInt('BENCH_DURATION', 10);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 10);
const ROUNDS = envInt('BENCH_ROUNDS', 3);
const READ_TARGET = 1.5;
const INGEST_TARGET = 0.9;
const FLEET_TENANTS = 50;
const SCENARIOS = ['oneTenant', 'fleet'] as const;
type Scenario = (typeof SCENARIOS)[number];
const SCENARIO_LABEL: Record<Scenario, string> = {
  oneTenant: '1 tenant, 20 receptionists',
  fleet: `${FLEET_TENANTS} tenants, 2 receptionists each`,
};

const fmt = (n: number, digits = 2): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
const verdict = (met: boolean) => (met ? 'MET' : 'MISSED');

async function main(): Promise<number> {
  installChildCleanup(stopIngest);
  const startedAt = new Date();
  const machine = machineInfo();
  log(`usage benchmark: nproc ${machine.nproc}, node ${machine.node}, load ${machine.loadavg}`);
  const seed = await step('seed', () => ensureUsageSeed(SPEC, process.env.BENCH_RESEED === '1'));
  const knex = createKnex(seed.benchUrl, { poolMax: 2 });
  try {
    const pgVersion = (
      (await knex.raw('SHOW server_version')) as { rows: { server_version: string }[] }
    ).rows[0]?.server_version;
    const ingestToken = randomBytes(24).toString('hex');
    const port = await freePort();
    await compileForBench();
    const api = startTsChild('api', serviceEntry('apps/api/dist/server.js'), {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: seed.benchUrl,
      QUEUE_PREFIX: '{sbbu}',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      INGEST_TOKEN: ingestToken,
      CURSOR_SECRET: randomBytes(24).toString('hex'),
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ...UNLIMITED_API_RATE,
    });
    const base = `http://127.0.0.1:${port}`;
    await step(`starting the API on port ${port}`, () => waitForHttp(api, `${base}/healthz`));

    const read = await measureReads(
      base,
      seed.period,
      { big: seed.big.apiKey, small: seed.small.apiKey },
      { warmup: 30, samples: SAMPLES },
    );
    const readRatio = read.big.latency.p50 / read.small.latency.p50;
    const plan = await explainRead(knex, seed.benchUrl, seed.big.tenantId, seed.period);

    const opts = {
      connections: CONNECTIONS,
      duration: DURATION_S,
      rounds: ROUNDS,
      apiPid: api.proc.pid,
    };
    const targets = {
      oneTenant: await ingestTenants(knex, 1, 20),
      fleet: await ingestTenants(knex, FLEET_TENANTS, 2),
    };
    const ingest = {
      oneTenant: await measureIngest('1 tenant', base, ingestToken, targets.oneTenant, knex, opts),
      fleet: await measureIngest('50 tenants', base, ingestToken, targets.fleet, knex, opts),
    };
    const counted = {
      oneTenant: await checkCounted(knex, targets.oneTenant, ingest.oneTenant.meteredAccepted),
      fleet: await checkCounted(knex, targets.fleet, ingest.fleet.meteredAccepted),
    };
    const med = (s: Scenario, mode: IngestMode, f: Exclude<keyof IngestRun, 'ok'>) =>
      median(ingest[s].runs[mode].map((r) => r[f]));
    const ratio = (s: Scenario) => med(s, 'metered', 'rps') / med(s, 'baseline', 'rps');

    const report = [
      '',
      'Usage benchmark (issue 11)',
      `machine: ${machine.nproc} cores (${machine.cpuModel}), node ${machine.node}, PostgreSQL ${pgVersion}; load before: ${machine.loadavg.join(' ')}`,
      `seed: ${SPEC.bigCalls.toLocaleString('en-US')} + ${SPEC.smallCalls.toLocaleString('en-US')} calls ending in ${seed.period}${seed.skipped ? ' (reused)' : ''}`,
      '',
      `GET /api/v1/usage?period=${seed.period}: ${SAMPLES} sequential requests per tenant, interleaved`,
      table([
        ['tenant', 'calls_completed', 'minutes_used', 'p50 ms', 'p90 ms', 'p99 ms'],
        ...(['big', 'small'] as const).map((w) => [
          w === 'big' ? `${SPEC.bigCalls.toLocaleString('en-US')} calls` : '1,000 calls',
          fmt(read[w].callsCompleted, 0),
          fmt(read[w].minutesUsed, 0),
          fmt(read[w].latency.p50, 3),
          fmt(read[w].latency.p90, 3),
          fmt(read[w].latency.p99, 3),
        ]),
      ]),
      `p50 big / small: ${fmt(readRatio)} (goal ≤ ${READ_TARGET}: ${verdict(readRatio <= READ_TARGET)})`,
      '',
      'EXPLAIN (ANALYZE, BUFFERS) of the read, big tenant:',
      ...plan.map((l) => `  ${l}`),
      '',
      `POST /internal/v1/telephony/events (call.ended): ${CONNECTIONS} connections, ${DURATION_S} s per run, ${ROUNDS} rotating rounds, medians`,
      table([
        [
          'calls of',
          'mode',
          'req/s',
          'p50 ms',
          'p99 ms',
          'CPU ms/req API',
          'CPU ms/req pg backends',
          'req/s per round',
        ],
        ...SCENARIOS.flatMap((sc) =>
          (['metered', 'baseline'] as const).map((mode) => [
            SCENARIO_LABEL[sc],
            mode === 'metered' ? 'metered (ends completed)' : 'baseline (ends voicemail)',
            fmt(med(sc, mode, 'rps'), 0),
            fmt(med(sc, mode, 'p50'), 0),
            fmt(med(sc, mode, 'p99'), 0),
            fmt(med(sc, mode, 'cpuMsServer'), 3),
            fmt(med(sc, mode, 'cpuMsPostgres'), 3),
            ingest[sc].runs[mode].map((r) => fmt(r.rps, 0)).join(' / '),
          ]),
        ),
      ]),
      ...SCENARIOS.map(
        (sc) =>
          `metered / baseline, ${SCENARIO_LABEL[sc]}: ${fmt(ratio(sc))} (goal ≥ ${INGEST_TARGET}: ${verdict(ratio(sc) >= INGEST_TARGET)})`,
      ),
      `checked: every completed call counted once (${counted.oneTenant.calls} + ${counted.fleet.calls} calls)`,
    ];
    process.stdout.write(`${report.join('\n')}\n`);
    const result = {
      benchmark: 'usage',
      command: 'npm run bench:usage',
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      postgres: pgVersion,
      spec: SPEC,
      settings: {
        samples: SAMPLES,
        connections: CONNECTIONS,
        durationSeconds: DURATION_S,
        rounds: ROUNDS,
      },
      read: { ...read, ratio: readRatio, plan },
      ingest: Object.fromEntries(
        SCENARIOS.map((sc) => [sc, { ...ingest[sc], ratio: ratio(sc), counted: counted[sc] }]),
      ),
    };
    saveResult('usage', startedAt, result, log);
    return 0;
  } finally {
    closeHttpAgent();
    await knex.destroy();
    await stopAllChildren();
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(`usage benchmark failed: ${(err as Error).stack ?? String(err)}`);
    await stopAllChildren();
    process.exit(1);
  },
);
