import * as pg from 'pg';
import { createKnex, DeliveryLifecycle, type Knex } from '@switchboard/db';
import { CLAIM_SQL, RECORD_SQL } from '../../packages/db/src/stores/delivery-lifecycle-sql';
import { createTestContext, type TestContext } from '../support/context';
import { addPastDays, captureStatements, todayOf } from '../support/plans';
import { emitUsageEvents, tenantWithSubscriptions } from '../support/subscribed-events';
import { fanOut } from '../support/fan-out';

// The worker runs the delivery path's batch statements on a pool of their own whose sessions
// plan each prepared statement once (apps/worker/src/webhook-delivery/index.ts). That plan is
// generic: it cannot prune partitions when planned, so each statement bounds the partition
// key with plain parameters, which Postgres prunes on as each run starts
// (docs/decisions/0082-plans-made-once.md). Checked on the statements the code sends, with their
// values.
let ctx: TestContext;
let knex: Knex;
let generic: Knex;
const lifecycle = new DeliveryLifecycle();
const PAST_DAYS = 5;

beforeAll(async () => {
  ctx = await createTestContext();
  knex = ctx.deps.knex;
  generic = createKnex(ctx.config.databaseUrl, { poolMax: 1, genericPlans: true });
  for (const table of ['events', 'webhook_deliveries', 'webhook_delivery_attempts']) {
    await addPastDays(knex, table, PAST_DAYS);
  }
});
afterAll(async () => {
  await generic?.destroy();
  await ctx?.close();
});

/** node-postgres' own formatting of a value as it sends it (arrays as array literals). */
const { prepareValue } = (pg as unknown as { utils: { prepareValue(v: unknown): unknown } }).utils;

interface Connection {
  query(text: string): Promise<{ rows: unknown[] }>;
  escapeLiteral(text: string): string;
}
interface PoolClient {
  acquireConnection(): Promise<Connection>;
  releaseConnection(connection: Connection): Promise<void>;
}

/**
 * `EXPLAIN (ANALYZE)` of `sql` run with `values` as a prepared statement on a connection of
 * `db`, in a transaction rolled back afterwards: the plan a session of that pool runs.
 */
async function preparedPlan(db: Knex, sql: string, values: readonly unknown[]): Promise<unknown> {
  const client = (db as unknown as { client: PoolClient }).client;
  const connection = await client.acquireConnection();
  const literal = (v: unknown): string => {
    const text = prepareValue(v) as string | null;
    return text === null ? 'NULL' : connection.escapeLiteral(text);
  };
  try {
    await connection.query('BEGIN');
    await connection.query(`PREPARE plan_check AS ${sql}`);
    const { rows } = await connection.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE plan_check(${values.map(literal).join(', ')})`,
    );
    return (rows[0] as { 'QUERY PLAN': unknown })['QUERY PLAN'];
  } finally {
    await connection.query('ROLLBACK');
    await connection.query('DEALLOCATE plan_check').catch(() => undefined);
    await client.releaseConnection(connection);
  }
}

/** The relations a plan scans (its scan nodes', not the update's targets), once each. */
function scannedIn(explain: unknown): string[] {
  const names = new Set<string>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    const type = n['Node Type'];
    if (typeof type === 'string' && type.endsWith('Scan') && typeof n['Relation Name'] === 'string')
      names.add(n['Relation Name']);
    for (const v of Object.values(n)) {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') walk(v);
    }
  };
  walk(explain);
  return [...names].sort();
}

/** Subplans pruned as the run started (a generic plan's), summed over the plan. */
function prunedAtStart(explain: unknown): number {
  let removed = 0;
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (typeof n['Subplans Removed'] === 'number') removed += n['Subplans Removed'];
    for (const v of Object.values(n)) {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') walk(v);
    }
  };
  walk(explain);
  return removed;
}

/**
 * The index conditions of the scans of `prefix`'s partitions that ran (a scan without one,
 * a sequential scan, is ''). A batch's rows must be found by their ids: a scan that reads
 * the day's rows by anything else grows with the day.
 */
function scansThatRan(explain: unknown, prefix: string): string[] {
  const conds: string[] = [];
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    const name = n['Relation Name'];
    const ran = typeof n['Actual Loops'] === 'number' && n['Actual Loops'] > 0;
    if (typeof name === 'string' && name.startsWith(prefix) && ran) {
      // A bitmap heap scan's condition is its index scan's, repeated as its recheck.
      const cond = n['Index Cond'] ?? n['Recheck Cond'];
      conds.push(typeof cond === 'string' ? cond : '');
    }
    for (const v of Object.values(n)) {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') walk(v);
    }
  };
  walk(explain);
  return conds;
}

/** The one statement `fn` sends whose text is `sql`. */
async function sent(sql: string, fn: () => Promise<unknown>): Promise<readonly unknown[]> {
  const found = (await captureStatements(fn)).filter((s) => s.sql === sql);
  expect(found).toHaveLength(1);
  return found[0]!.bindings;
}

it('a pool made with genericPlans plans prepared statements once; the others as Postgres chooses', async () => {
  const mode = async (db: Knex) =>
    ((await db.raw('SHOW plan_cache_mode')) as { rows: Array<{ plan_cache_mode: string }> })
      .rows[0]!.plan_cache_mode;
  expect(await mode(generic)).toBe('force_generic_plan');
  expect(await mode(knex)).toBe('auto');
  const seqscan = async (db: Knex) =>
    ((await db.raw('SHOW enable_seqscan')) as { rows: Array<{ enable_seqscan: string }> }).rows[0]!
      .enable_seqscan;
  expect(await seqscan(generic)).toBe('off');
  expect(await seqscan(knex)).toBe('on');
});

it("the claim's and the record's generic plans start only their batch's day, among many days kept", async () => {
  const { tenantId } = await tenantWithSubscriptions(ctx);
  const eventIds = await emitUsageEvents(knex, tenantId, 3);
  const open = await fanOut(knex, eventIds);
  expect(open).toHaveLength(3);
  const requests = open.map((d) => ({ deliveryId: d.id, round: 1, attempt: 1 }));
  const today = todayOf('webhook_deliveries');

  let taken: Awaited<ReturnType<DeliveryLifecycle['claim']>> = [];
  const takeValues = await sent(CLAIM_SQL, async () => {
    taken = await lifecycle.claim(generic, requests, 10_000);
  });
  expect(taken.every(Boolean)).toBe(true);
  const take = await preparedPlan(generic, CLAIM_SQL, takeValues);
  expect(prunedAtStart(take)).toBeGreaterThanOrEqual(PAST_DAYS);
  expect(scannedIn(take).filter((r) => r.startsWith('webhook_deliveries_'))).toEqual([today]);
  // Made while the day's partition has no statistics, as every new day's is, the plan still
  // finds the rows by id (docs/decisions/0082-plans-made-once.md).
  const takeScans = scansThatRan(take, 'webhook_deliveries_');
  expect(takeScans.length).toBeGreaterThan(0);
  for (const cond of takeScans) expect(cond).toMatch(/\bid = /);

  const recordValues = await sent(RECORD_SQL, async () => {
    const moved = await lifecycle.record(
      generic,
      taken.map((t) => ({
        delivery: t!.delivery,
        statusCode: 200,
        error: null,
        durationMs: 5,
        excerpt: null,
        outcome: { kind: 'succeeded' as const },
        logAttempt: true,
      })),
    );
    expect(moved).toEqual([true, true, true]);
  });
  // The same batch again, rolled back (its rows have moved on: the update finds none, and
  // its plan is the same).
  const record = await preparedPlan(generic, RECORD_SQL, recordValues);
  expect(prunedAtStart(record)).toBeGreaterThanOrEqual(PAST_DAYS);
  expect(scannedIn(record).filter((r) => r.startsWith('webhook_deliveries_'))).toEqual([today]);
  const recordScans = scansThatRan(record, 'webhook_deliveries_');
  expect(recordScans.length).toBeGreaterThan(0);
  for (const cond of recordScans) expect(cond).toMatch(/\bid = /);

  // Each ran once on the pool's one connection, with the plan made once, never for its values.
  const { rows } = (await generic.raw(
    `SELECT name, generic_plans, custom_plans FROM pg_prepared_statements
      WHERE name IN ('sb_dl_claim', 'sb_dl_record') ORDER BY name`,
  )) as { rows: Array<{ name: string; generic_plans: string; custom_plans: string }> };
  expect(rows.map((r) => [r.name, Number(r.generic_plans), Number(r.custom_plans)])).toEqual([
    ['sb_dl_claim', 1, 0],
    ['sb_dl_record', 1, 0],
  ]);
});

it("a delivery job's claim finds its rows by id, not through the open deliveries", async () => {
  const { tenantId } = await tenantWithSubscriptions(ctx);
  // Open deliveries in today's partition besides the batch: what a wrong plan would read.
  await fanOut(knex, await emitUsageEvents(knex, tenantId, 40));
  const open = await fanOut(knex, await emitUsageEvents(knex, tenantId, 3));
  const requests = open.map((d) => ({ deliveryId: d.id, round: 1, attempt: 1 }));
  const values = await sent(CLAIM_SQL, async () => {
    const claimed = await lifecycle.claim(generic, requests, 10_000);
    expect(claimed.every(Boolean)).toBe(true);
  });
  // The same batch again, rolled back: the rows are claimed now, so the plan is read, not
  // its result.
  const claim = await preparedPlan(generic, CLAIM_SQL, values);
  expect(scannedIn(claim).filter((r) => r.startsWith('webhook_deliveries_'))).toEqual([
    todayOf('webhook_deliveries'),
  ]);
  const scans = scansThatRan(claim, 'webhook_deliveries_');
  expect(scans.length).toBeGreaterThan(0);
  for (const cond of scans) expect(cond).toMatch(/\bid = /);
});

it('the statement that writes events is planned once per connection, not at each emit', async () => {
  // One connection: every emit below runs on it, and so does the read of its statements.
  const single = createKnex(ctx.config.databaseUrl, { poolMax: 1 });
  try {
    const { tenantId } = await tenantWithSubscriptions(ctx);
    for (let i = 0; i < 8; i++) await emitUsageEvents(single, tenantId, 1 + (i % 3));
    const { rows } = (await single.raw(
      `SELECT generic_plans, custom_plans FROM pg_prepared_statements
        WHERE name = 'sb_insert_events'`,
    )) as { rows: Array<{ generic_plans: string; custom_plans: string }> };
    // Postgres plans a prepared statement for its values five times, then compares.
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.custom_plans)).toBeLessThanOrEqual(5);
    expect(Number(rows[0]!.generic_plans)).toBeGreaterThanOrEqual(3);
  } finally {
    await single.destroy();
  }
});

it("the relay's batch is planned once per connection on the statements' pool", async () => {
  // What the relay runs for each batch (apps/worker/src/webhook-delivery/relay.ts), on a
  // connection of the worker's statements' pool (here a pool of one): one prepared
  // statement, planned once there whatever the batch.
  const single = createKnex(ctx.config.databaseUrl, { poolMax: 1, genericPlans: true });
  const plans = async (name: string) => {
    const { rows } = (await single.raw(
      'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = ?',
      [name],
    )) as { rows: Array<{ generic_plans: string; custom_plans: string }> };
    return rows.map((r) => [Number(r.generic_plans), Number(r.custom_plans)]);
  };
  try {
    const { tenantId } = await tenantWithSubscriptions(ctx);
    let made = 0;
    for (let batch = 1; batch <= 4; batch++) {
      const ids = await emitUsageEvents(knex, tenantId, batch);
      const got = await lifecycle.publishNext(single, {
        after: '',
        otherRoom: 1_000,
        limit: 1_000,
        lockMs: 10_000,
      });
      // This batch's events (and, the first time, those the tests above left unpublished).
      const mine = got.made.filter((c) => c.delivery.tenantId === tenantId);
      expect(new Set(mine.map((c) => c.delivery.eventId))).toEqual(new Set(ids));
      made += mine.length;
    }
    expect(made).toBeGreaterThanOrEqual(1 + 2 + 3 + 4);
    expect(await plans('sb_dl_publish_next')).toEqual([[4, 0]]);
  } finally {
    await single.destroy();
  }
});

it("the relay's batch planned on an empty outbox reads a later backlog by its keys", async () => {
  // Empty the outbox first (the tests above leave events in it), on the usual pool.
  const batch = (db: Knex) =>
    lifecycle.publishNext(db, { after: '', otherRoom: 1_000, limit: 1_000, lockMs: 10_000 });
  for (let i = 0; i < 50 && (await batch(knex)).relayed > 0; i++);
  expect(await knex('event_outbox').count({ n: '*' })).toEqual([{ n: '0' }]);
  // As autovacuum leaves a drained outbox: known to be empty (not merely never counted).
  await knex.raw('VACUUM ANALYZE event_outbox');
  const single = createKnex(ctx.config.databaseUrl, { poolMax: 1, genericPlans: true });
  try {
    // Planned now, on the empty outbox, as at a worker's boot; then a backlog comes.
    expect((await batch(single)).relayed).toBe(0);
    const { tenantId } = await tenantWithSubscriptions(ctx);
    for (let n = 1; n <= 8; n++) await emitUsageEvents(knex, tenantId, n);
    const { rows } = (await single.raw(
      `EXPLAIN EXECUTE sb_dl_publish_next('', 100, '{}', '{}', 5, 5, 10)`,
    )) as { rows: Array<{ 'QUERY PLAN': string }> };
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    // Every read of the outbox by an index (the tenants' skip scans, each tenant's oldest
    // events, the delete of those kept by their key), none a scan of the whole table.
    expect(plan).not.toMatch(/Seq Scan on event_outbox/);
    expect(plan).toMatch(/Index Cond: \(event_id = ANY/);
    expect((await batch(single)).relayed).toBeGreaterThan(0);
  } finally {
    await single.destroy();
  }
});
