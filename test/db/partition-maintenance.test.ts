import { spawnSync } from 'node:child_process';
import IORedis from 'ioredis';
import {
  createKnex,
  createStores,
  ensureAhead,
  migrateLatest,
  PARTITIONED_TABLES,
  runMaintenance,
  TenantRetentionStore,
  type Knex,
} from '@switchboard/db';
import { runLocked } from '../../apps/worker/src/maintenance';
import type { WorkerDeps } from '../../apps/worker/src/deps';
import { bareEnv } from '../support/api-process';
import { CLI_BUNDLE } from '../support/bundles';
import { REDIS_URL } from '../support/env';
import { createPrePartitionDatabase } from '../support/pre-partition-db';
import { seedHistory } from '../support/seed-history';

// The maintenance job on a database with 100 days of history (one row of each kind every
// few hours), migrated from before partitioning so that it has a partition per past day.
const DAY = 86_400_000;
let db: Awaited<ReturnType<typeof createPrePartitionDatabase>>;
let knex: Knex;
const count = async (table: string, where = 'true') =>
  Number(
    (
      (await knex.raw(`SELECT count(*) AS n FROM ${table} WHERE ${where}`)) as {
        rows: { n: string }[];
      }
    ).rows[0]?.n,
  );
const partitions = async (table: string) =>
  (
    (await knex.raw(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ?::regclass ORDER BY 1`,
      [table],
    )) as { rows: { name: string }[] }
  ).rows.map((r) => r.name);
const dayName = (table: string, at: Date) =>
  `${table}_p${at.toISOString().slice(0, 10).replace(/-/g, '')}`;

beforeAll(async () => {
  db = await createPrePartitionDatabase();
  knex = db.knex;
  await seedHistory(knex, 800, 100 / 30);
  await migrateLatest(knex);
  // Each delivery's latest attempt kept on its row, as the worker keeps it (migration 096):
  // it goes away with the delivery's day, the attempts before it with their own days.
  await knex.raw(
    `WITH latest AS (
       DELETE FROM webhook_delivery_attempts WHERE attempt = 2
       RETURNING delivery_id, round, attempt, status_code, duration_ms, attempted_at)
     UPDATE webhook_deliveries d
        SET latest_round = l.round, latest_attempt = l.attempt,
            latest_status_code = l.status_code, latest_duration_ms = l.duration_ms,
            latest_attempted_at = l.attempted_at
       FROM latest l WHERE l.delivery_id = d.id`,
  );
  // Every migration from scratch, then partitioning of populated tables: a busy machine needs
  // longer than jest's default.
}, 180_000);
afterAll(async () => {
  await db?.close();
});

it('drops whole days past the retention, never the current or a future one, and finishes a crashed drop', async () => {
  // A run that crashed between detaching a day and dropping it.
  const old = dayName('webhook_deliveries', new Date(Date.now() - 60 * DAY));
  expect(await partitions('webhook_deliveries')).toContain(old);
  await knex.raw(`ALTER TABLE webhook_deliveries DETACH PARTITION ${old}`);

  const before = {
    calls: await count('calls'),
    recent: await count('webhook_deliveries', `created_at >= now() - interval '29 days'`),
  };
  expect(
    await count('webhook_deliveries', `created_at < now() - interval '31 days'`),
  ).toBeGreaterThan(0);
  // The job's clock a year ahead: Postgres' clock still says which day is current.
  const report = await runMaintenance(
    { knex, stores: createStores(knex) },
    {
      deliveryRetentionDays: 30,
      now: new Date(Date.now() + 365 * DAY),
    },
  );
  expect(report.finished).toEqual([old]);
  expect(await count('pg_class', `relname = '${old}'`)).toBe(0);
  expect(report.dropped.length).toBeGreaterThan(4 * 60);
  expect(
    await count('webhook_delivery_attempts_all', `attempted_at < now() - interval '31 days'`),
  ).toBe(0);
  for (const table of ['events', 'webhook_deliveries', 'webhook_delivery_attempts']) {
    expect(
      await count(
        table,
        `${table === 'webhook_delivery_attempts' ? 'attempted_at' : 'created_at'} < now() - interval '31 days'`,
      ),
    ).toBe(0);
    const names = await partitions(table);
    for (let d = 0; d <= 7; d++)
      expect(names).toContain(dayName(table, new Date(Date.now() + d * DAY)));
  }
  expect(await count('webhook_deliveries', `created_at >= now() - interval '29 days'`)).toBe(
    before.recent,
  );
  // Call and SMS history is kept until the tenant sets a retention.
  expect(await count('calls')).toBe(before.calls);
  // Idempotency keys older than a day are gone.
  expect(
    await count('calls', `idempotency_key IS NOT NULL AND started_at < now() - interval '1 day'`),
  ).toBe(0);
});

it("deletes row by row what a tenant's shorter delivery retention is past", async () => {
  // Another tenant keeps 40 days, so the days between are kept for it and ten_h's rows in
  // them are deleted one by one, with their attempts.
  await knex('tenants').insert({ id: 'ten_long', name: 'Long', delivery_retention_days: 40 });
  const store = new TenantRetentionStore(knex);
  await store.set('ten_h', { deliveryDays: 5 });
  const recent = await count('webhook_deliveries', `created_at >= now() - interval '4 days'`);
  const report = await runMaintenance(
    { knex, stores: createStores(knex) },
    { deliveryRetentionDays: 30 },
  );
  expect(report.rowsDeleted).toBeGreaterThan(0);
  expect(await count('webhook_deliveries', `created_at < now() - interval '5 days'`)).toBe(0);
  expect(await count('events', `created_at < now() - interval '5 days'`)).toBe(0);
  expect(
    await count(
      'webhook_delivery_attempts_all a',
      `NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)`,
    ),
  ).toBe(0);
  expect(await count('webhook_deliveries', `created_at >= now() - interval '4 days'`)).toBe(recent);
  await store.set('ten_h', { deliveryDays: null });
});

it("deletes a tenant's calls and SMS past its --calls-days, row by row", async () => {
  const keep = await count('calls', `started_at >= now() - interval '9 days'`);
  expect(await new TenantRetentionStore(knex).set('ten_h', { callsDays: 10 })).toMatchObject({
    callsDays: 10,
  });
  await runMaintenance({ knex, stores: createStores(knex) }, { deliveryRetentionDays: 30 });
  expect(await count('calls', `started_at < now() - interval '10 days'`)).toBe(0);
  expect(await count('sms_messages', `created_at < now() - interval '10 days'`)).toBe(0);
  expect(await count('calls', `started_at >= now() - interval '9 days'`)).toBe(keep);
});

it('moves rows dated beyond the ranges out of the default when their range is made', async () => {
  const t = PARTITIONED_TABLES.find((p) => p.table === 'events')!;
  const at = new Date(Date.now() + 10 * DAY);
  await knex('events').insert({
    id: 'evt_ahead',
    tenant_id: 'ten_h',
    type: 'x',
    data: {},
    created_at: at,
  });
  const where = async () =>
    (
      (await knex.raw(
        `SELECT tableoid::regclass::text AS p FROM events WHERE id = 'evt_ahead'`,
      )) as {
        rows: { p: string }[];
      }
    ).rows[0]?.p;
  expect(await where()).toBe('events_default');
  await ensureAhead(knex, t, new Date(Date.now() + 5 * DAY), 2_000);
  expect(await where()).toBe(dayName('events', at));
});

it('is retried later when Postgres is away, and runs on one worker at a time', async () => {
  const away = createKnex('postgres://postgres@127.0.0.1:1/none', { poolMax: 1 });
  await expect(
    runMaintenance({ knex: away, stores: createStores(away) }, { deliveryRetentionDays: 30 }),
  ).rejects.toThrow();
  await away.destroy();
  const redis = new IORedis(REDIS_URL);
  try {
    const deps = {
      knex,
      stores: createStores(knex),
      redis,
      config: { deliveryRetentionDays: 30 },
    } as unknown as WorkerDeps;
    const key = `sbt-maintenance-${process.pid}`;
    const runs = await Promise.all([runLocked(deps, key), runLocked(deps, key)]);
    expect(runs.filter((r) => r !== undefined)).toHaveLength(1);
    expect(await redis.exists(key)).toBe(0);
  } finally {
    await redis.quit();
  }
});

it('refuses a retention out of range with a clear CLI error', () => {
  for (const [flag, value, message] of [
    ['--calls-days', '0', '--calls-days must be an integer from 1 to 36500, or forever'],
    ['--delivery-days', '91', '--delivery-days must be an integer from 1 to 90, or default'],
    ['--delivery-days', 'x', '--delivery-days must be an integer from 1 to 90, or default'],
  ] as const) {
    const out = spawnSync(
      process.execPath,
      [CLI_BUNDLE, 'tenant', 'retention', '--id', 'ten_h', flag, value],
      {
        env: { ...bareEnv(), DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/none' },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(out.status).toBe(2);
    expect(out.stderr.split('\n')[0]).toBe(message);
  }
});
