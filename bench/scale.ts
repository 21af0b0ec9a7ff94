/**
 * History at scale (issue 28): `npm run bench:scale -- [--scale S] [--calls N] [--events N]`.
 *
 * 1. Seeds `switchboard_bench_scale`, migrated to 012 (before partitioning), by COPY with
 *    progress bars: 50,000,000 × S deliveries (S = --scale, default 0.1), one event each and
 *    1.2 attempts on average, over the last 35 days; 10,000,000 × S calls (or --calls N) over
 *    24 months, 60 % of them the big tenant's.
 * 2. Runs the online migration (020) on it while a writer inserts a call every 10 ms: the
 *    migration's duration, each table's write-blocking switch, the writer's slowest insert.
 * 3. Creates `switchboard_bench_scale_empty` (fresh, every migration) for comparison.
 * 4. Measures on both: deliveries/s of one worker and the relay lag (bench/scale/worker.ts;
 *    --events, default 10,000, through an HTTPS receiver on 127.0.0.1), and on the seeded
 *    one the calls page (20) p50 at depth 0 and 1M of the big tenant, the delivery log
 *    page p95 (both in process: the list queries the API runs), dropping the oldest day of
 *    delivery history while a writer inserts into today's partition, and table and index
 *    sizes before and after the maintenance job's retention (DELIVERY_RETENTION_DAYS=30).
 * 5. Prints a table and writes bench/.results/scale-<timestamp>.json. Both databases are
 *    dropped at the end unless --keep.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import {
  convertToPartitioned,
  createKnex,
  createStores,
  migrateLatest,
  PARTITIONED_TABLES,
  runMaintenance,
  type ConvertResult,
  type Knex,
} from '@switchboard/db';
import { migrationSource } from '../packages/db/src/migrations';
import { generateCertificate } from '../packages/webhooks/src/testing/tls-receiver';
import { installChildCleanup, stopAllChildren } from './delivery/children';
import { ReceiverClient } from './delivery/receiver-client';
import { closeHttpAgent } from './lib/http';
import { log, step } from './lib/progress';
import { saveResult } from './lib/results';
import { summarize, table } from './lib/stats';
import { callsPage, deliveryLogPage, dropOneDay, sizes } from './scale/measure';
import { seedScale, type ScaleSpec } from './scale/seed';
import { seedDirect } from './scale/seed-direct';
import { workerRun } from './scale/worker';

const { values: args } = parseArgs({
  options: {
    scale: { type: 'string', default: '0.1' },
    calls: { type: 'string' },
    events: { type: 'string', default: '10000' },
    keep: { type: 'boolean', default: false },
    mode: { type: 'string', default: 'migrate' },
    jobs: { type: 'string', default: '2' },
    'min-free-gb': { type: 'string', default: '10' },
  },
});
const mode = args.mode;
if (mode !== 'migrate' && mode !== 'direct') throw new Error('--mode must be migrate or direct');
const scale = Number(args.scale);
if (!(scale > 0 && scale <= 1)) throw new Error('--scale must be a number in (0, 1]');
const SPEC: ScaleSpec = {
  deliveries: Math.round(50_000_000 * scale),
  calls: args.calls ? Number(args.calls) : Math.round(10_000_000 * scale),
  deliveryDays: 35,
  callMonths: 24,
  bigTenantShare: 0.6,
};
const EVENTS = Number(args.events);
const ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';
const FULL = 'switchboard_bench_scale';
const EMPTY = 'switchboard_bench_scale_empty';
const url = (db: string) => `postgres://postgres@127.0.0.1:5432/${db}`;
const MB = (b: number) => (b / 1048576).toFixed(0);

async function recreate(db: string): Promise<void> {
  const c = new Client({ connectionString: ADMIN });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  await c.query(`CREATE DATABASE "${db}"`);
  await c.end();
}

/** The online migration with a writer inserting a call every 10 ms throughout. */
async function migrateOnline(knex: Knex, writer: Knex) {
  let stop = false;
  const latencies: number[] = [];
  const writes = (async () => {
    for (let i = 0; !stop; i++) {
      const t0 = performance.now();
      await writer.raw(
        `INSERT INTO calls (id, tenant_id, receptionist_id, direction, status, from_number,
                            to_number, started_at)
         VALUES (?, 'ten_s1', 'rcp_s1', 'inbound', 'completed', '+1', '+2', now())`,
        [`call_mw${i}`],
      );
      latencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const t0 = performance.now();
  const tables: ConvertResult[] = [];
  for (const t of PARTITIONED_TABLES) {
    tables.push(await convertToPartitioned(knex, t, { log }));
  }
  await migrateLatest(knex);
  const seconds = (performance.now() - t0) / 1000;
  stop = true;
  await writes;
  return { seconds: Number(seconds.toFixed(1)), tables, writerInsertMs: summarize(latencies) };
}

function migrationRows(migration: Awaited<ReturnType<typeof migrateOnline>>): string[][] {
  return [
    ['online migration, total', `${migration.seconds} s`],
    ...migration.tables.map((t) => [
      `  ${t.table}: rows / writes blocked`,
      `${t.rows} / ${t.blockedMs} ms`,
    ]),
    [
      '  writer insert during migration p50 / p99 / max',
      `${migration.writerInsertMs.p50} / ${migration.writerInsertMs.p99} / ${migration.writerInsertMs.max} ms`,
    ],
  ];
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const loadAtStart = loadavg();
  log(
    `bench:scale --mode ${mode} at --scale ${scale}: ${SPEC.deliveries} deliveries, ${SPEC.calls} calls; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const tmp = mkdtempSync(join(tmpdir(), 'sb-bench-scale-'));
  const cert = generateCertificate('IP:127.0.0.1');
  writeFileSync(join(tmp, 'cert.pem'), cert.cert);
  writeFileSync(join(tmp, 'key.pem'), cert.key, { mode: 0o600 });
  const knexes: Knex[] = [];
  installChildCleanup(async () => undefined);
  try {
    await recreate(FULL);
    const full = createKnex(url(FULL), { poolMax: 4 });
    const writer = createKnex(url(FULL), { poolMax: 1 });
    knexes.push(full, writer);
    let seed: {
      rows: number;
      seconds: number;
      rowsPerSecond: number;
      stoppedEarly?: string | null;
    };
    let migration: Awaited<ReturnType<typeof migrateOnline>> | null = null;
    if (mode === 'migrate') {
      await full.migrate.latest({
        migrationSource: {
          ...migrationSource,
          getMigrations: async (e) =>
            (await migrationSource.getMigrations(e)).filter((n) => n <= '012_rate_limits'),
        },
      });
      const seedStarted = Date.now();
      await step('seeding by COPY', () => seedScale(url(FULL), SPEC));
      const seconds = (Date.now() - seedStarted) / 1000;
      const rows = SPEC.deliveries * 3.2 + SPEC.calls;
      seed = { rows, seconds, rowsPerSecond: Math.round(rows / seconds) };
      migration = await step('online migration (020) with a writer', () =>
        migrateOnline(full, writer),
      );
    } else {
      await migrateLatest(full);
      seed = await step('seeding the partitions directly', () =>
        seedDirect(url(FULL), SPEC, {
          jobs: Number(args.jobs),
          minFreeBytes: Number(args['min-free-gb']) * 2 ** 30,
        }),
      );
    }
    await full.raw('ANALYZE');
    await recreate(EMPTY);
    const empty = createKnex(url(EMPTY), { poolMax: 4 });
    knexes.push(empty);
    await migrateLatest(empty);

    const depth = Math.min(1_000_000, Math.round(SPEC.calls * SPEC.bigTenantShare) - 20);
    const pages = await step('calls and delivery log pages', async () => ({
      calls0: await callsPage(full, 0, 200),
      callsDeep: await callsPage(full, depth, 200),
      log: await deliveryLogPage(full, 200),
      logEmpty: await deliveryLogPage(empty, 200),
    }));

    const receiver = await ReceiverClient.start({
      ...process.env,
      NODE_ENV: 'production',
      RECEIVER_KEY_FILE: join(tmp, 'key.pem'),
      RECEIVER_CERT_FILE: join(tmp, 'cert.pem'),
    });
    const key = randomBytes(32);
    const env = (db: string): NodeJS.ProcessEnv => ({
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: url(db),
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      NODE_EXTRA_CA_CERTS: join(tmp, 'cert.pem'),
      LOG_LEVEL: 'warn',
      WORKER_CONCURRENCY: '50',
      SECRET_ENCRYPTION_KEY: key.toString('base64'),
    });
    const workerEmpty = await step('one worker, empty database', () =>
      workerRun(empty, receiver, env(EMPTY), key, 'empty', EVENTS),
    );
    const workerFull = await step('one worker, seeded database', () =>
      workerRun(full, receiver, env(FULL), key, 'full', EVENTS),
    );
    await receiver.child.stop();

    const before = await sizes(full);
    const drop = await step('dropping the oldest day', () => dropOneDay(full, writer));
    const retention = await step('maintenance: 30-day retention', () =>
      runMaintenance({ knex: full, stores: createStores(full) }, { deliveryRetentionDays: 30 }),
    );
    const after = await sizes(full);

    const result = {
      spec: SPEC,
      scale,
      mode,
      loadAverage: { start: loadAtStart, end: loadavg() },
      finishedAt: new Date().toISOString(),
      seed,
      migration,
      depth,
      pages,
      workerEmpty,
      workerFull,
      drop,
      retention: { dropped: retention.dropped.length, rowsDeleted: retention.rowsDeleted },
      before,
      after,
    };
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    log('');
    log(
      table([
        ['measure', 'value'],
        [
          mode === 'migrate' ? 'seed (COPY into 012)' : 'seed (straight into the partitions)',
          `${seed.rows} rows in ${seed.seconds.toFixed(0)} s (${seed.rowsPerSecond} rows/s)`,
        ],
        ...(seed.stoppedEarly ? [['  seed stopped early', seed.stoppedEarly]] : []),
        ...(migration ? migrationRows(migration) : []),
        [
          'worker deliveries/s empty / seeded (ratio)',
          `${workerEmpty.perSecond} / ${workerFull.perSecond} (${ratio(workerFull.perSecond, workerEmpty.perSecond)})`,
        ],
        [
          'relay lag p50 / p99 empty',
          `${workerEmpty.relayLagMs.p50} / ${workerEmpty.relayLagMs.p99} ms`,
        ],
        [
          'relay lag p50 / p99 seeded',
          `${workerFull.relayLagMs.p50} / ${workerFull.relayLagMs.p99} ms`,
        ],
        [
          `calls page p50 depth 0 / ${depth} (ratio)`,
          `${pages.calls0.p50} / ${pages.callsDeep.p50} ms (${ratio(pages.callsDeep.p50, pages.calls0.p50)})`,
        ],
        ['delivery log page p95 seeded / empty', `${pages.log.p95} / ${pages.logEmpty.p95} ms`],
        [
          `drop one day (${drop.day})`,
          `${drop.dropMs} ms; writer max ${drop.writeMaxMs} ms over ${drop.writes} inserts`,
        ],
        ...Object.keys(before).map((t) => [
          `${t} table+index MB before → after`,
          `${MB(before[t]!.table)}+${MB(before[t]!.index)} → ${MB(after[t]!.table)}+${MB(after[t]!.index)}`,
        ]),
      ]),
    );
    saveResult('scale', startedAt, result, log);
  } finally {
    for (const k of knexes) await k.destroy().catch(() => undefined);
    await stopAllChildren();
    closeHttpAgent();
    rmSync(tmp, { recursive: true, force: true });
    if (!args.keep) {
      for (const db of [FULL, EMPTY]) {
        const c = new Client({ connectionString: ADMIN });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
        await c.end();
      }
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(`bench:scale failed: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  },
);
