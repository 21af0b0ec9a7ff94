/**
 * The reads that used to touch every daily partition, before and after they were bounded
 * (docs/benchmarks/scale.md, History at scale): Postgres' partitions run and buffer counts from
 * EXPLAIN (ANALYZE, BUFFERS), deterministic unlike rates on a shared machine. Makes its own
 * database with `--days` past days (35 by default: 45 partitions per daily table, as the
 * scale benchmark's) and 2,000 deliveries a day to one subscription, then drops it:
 *
 *   npx tsx bench/partition-reads.ts [--days 35]
 *
 * "Before" is each statement as it was: the scans with their floor at -infinity (as after
 * migration 081, before the first sweep), the log page as one ORDER BY over the table, the
 * recovery without its `since` bounds.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import {
  createKnex,
  createStores,
  DeliveryLifecycle,
  migrateLatest,
  sweepPendingFloor,
  type Knex,
} from '@switchboard/db';
import { eventOfDelivery } from '../packages/db/src/stores/event-of-delivery';
import {
  addPastDays,
  captureStatements,
  partitionsOf,
  planOf,
  type Statement,
} from '../test/support/plans';

const DB = 'switchboard_bench_partition_reads';
const ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';
const PER_DAY = 2000;

async function admin(sql: string): Promise<void> {
  const c = new Client({ connectionString: ADMIN });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function seed(knex: Knex, days: number): Promise<{ tenantId: string; sub: string }> {
  const stores = createStores(knex);
  const tenant = await stores.tenants.create({ name: 'Bench' });
  const sub = randomUUID();
  await knex('webhook_subscriptions').insert({
    id: sub,
    tenant_id: tenant.id,
    url: 'https://127.0.0.1:9/h',
    secret_ciphertext: 'x',
    secret_key_id: 'k',
    created_at: knex.raw(`now() - interval '1 year'`),
  });
  // One statement per day: the uniqueness triggers take a lock per row.
  for (let day = 0; day <= days; day++) {
    await knex.raw(
      `WITH rows AS (
         SELECT i, date_trunc('day', now()) - make_interval(days => ?) + make_interval(secs => i * 40)
                  AS at, md5(? || '/' || i) AS h
           FROM generate_series(1, ?::int) i)
       , ev AS (
         INSERT INTO events (id, tenant_id, type, data, created_at, published_at, fanned_out_at)
         SELECT 'evt_' || h, ?, 'call.completed', '{}', at, at, at FROM rows)
       INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, status,
                                       attempts, created_at, updated_at, completed_at)
       SELECT 'dlv_' || h, ?, 'evt_' || h, ?,
              CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'succeeded' END, 1, at, at, at
         FROM rows`,
      [day, day, PER_DAY, tenant.id, tenant.id, sub],
    );
  }
  await knex.raw('ANALYZE events; ANALYZE webhook_deliveries');
  return { tenantId: tenant.id, sub };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { days: { type: 'string', default: '35' } } });
  const days = Number(values.days);
  await admin(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${DB}`);
  const knex = createKnex(`postgres://postgres@127.0.0.1:5432/${DB}`, { poolMax: 2 });
  try {
    await migrateLatest(knex);
    await addPastDays(knex, 'webhook_deliveries', days);
    await addPastDays(knex, 'events', days);
    const { tenantId, sub } = await seed(knex, days);
    const stores = createStores(knex);
    const lifecycle = new DeliveryLifecycle();
    const rows: string[] = [];
    const measure = async (label: string, s: Statement, table: string) => {
      const plan = await planOf(knex, s, true);
      const run = partitionsOf(plan, table, true).length;
      rows.push(`| ${label} | ${run} of ${partitionsOf(plan, table).length} | ${plan.buffers} |`);
    };
    const last = async (fn: () => Promise<unknown>, marker: RegExp) =>
      (await captureStatements(fn)).filter((s) => marker.test(s.sql)).at(-1)!;
    const scans = async (when: string) => {
      const adopt = await last(() => stores.events.adoptLegacy(15_000, 500), /fanned_out/);
      await measure(`reconciler: events pending of earlier versions, ${when}`, adopt, 'events');
      const overdue = await last(() => lifecycle.overdue(knex, 15_000, 500), /next_attempt_at/);
      await measure(`reconciler: overdue deliveries, ${when}`, overdue, 'webhook_deliveries');
      const lapsed = await last(() => lifecycle.lapsed(knex, 500), /locked_until/);
      await measure(`lapse check, ${when}`, lapsed, 'webhook_deliveries');
    };
    await scans('floor -infinity (before)');
    await sweepPendingFloor(knex, 'events');
    await sweepPendingFloor(knex, 'webhook_deliveries');
    await scans('floor swept (after)');

    const page = await last(
      () => stores.deliveries.listForSubscription(sub, { limit: 20 }),
      /union all/i,
    );
    await measure('delivery log page (20), after', page, 'webhook_deliveries');
    await measure(
      'delivery log page (20), before',
      {
        sql: `SELECT d.*, ${eventOfDelivery('e.type')} AS event_type FROM webhook_deliveries d
               WHERE d.subscription_id IS NOT NULL AND d.subscription_id = $1
               ORDER BY d.created_at DESC, d.id DESC LIMIT 21`,
        bindings: [sub],
      },
      'webhook_deliveries',
    );
    const since = new Date(Date.now() - 3 * 86_400_000);
    const check = await last(
      () =>
        stores.webhookRecoveries.start({ tenantId, subscriptionId: sub, since, until: new Date() }),
      /NOT EXISTS \(SELECT 1 FROM webhook_deliveries d/,
    );
    await measure('recovery since 3 days ago, after', check, 'webhook_deliveries');
    const unbounded = check.sql
      .replace(
        /AND d\.created_at >= (\$\d+)::timestamptz - interval '1 hour'/,
        'AND $1::timestamptz IS NOT NULL',
      )
      .replace(/AND e\.created_at >= (\$\d+) AND/, 'AND $1::timestamptz IS NOT NULL AND');
    if (unbounded === check.sql)
      throw new Error('the recovery statement changed: update the bench');
    await measure(
      'recovery since 3 days ago, before',
      { sql: unbounded, bindings: check.bindings },
      'webhook_deliveries',
    );
    process.stdout.write(
      `${days} past days, ${PER_DAY} deliveries a day\n\n| read | partitions run | buffers |\n|---|---:|---:|\n${rows.join('\n')}\n`,
    );
  } finally {
    await knex.destroy();
    await admin(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/partition-reads failed: ${String(err)}\n`);
  process.exit(1);
});
