import { idTimeWindow, type Knex } from '@switchboard/db';
import { FAN_OUT_SQL } from '../../packages/db/src/stores/delivery-lifecycle-sql';
import { createTestContext, type TestContext } from '../support/context';
import { namesIn } from '../support/plans';
import { emitUsageEvents, tenantWithSubscriptions } from '../support/subscribed-events';

// The fan-out statement finds each event by its primary key alone, whatever the statistics
// (docs/decisions/0048-fan-out-finds-events-by-key.md). An import fills the outbox and a day's
// partition of events with a backlog not yet fanned out; before they are analyzed, the
// planner used to AND the key with the partial index of events not fanned out, reading the
// whole backlog for every event of every batch. The backlog is now the outbox's rows, found
// by their key too, never through the tenant's index of them.
const BACKLOG = 20_000;
let ctx: TestContext;
let knex: Knex;

beforeAll(async () => {
  ctx = await createTestContext();
  knex = ctx.deps.knex;
});
afterAll(async () => {
  await ctx?.close();
});

/** The generic plan of the fan-out statement (as a prepared statement runs it) for `ids`. */
async function genericPlan(ids: string[]): Promise<unknown> {
  const client = (knex as unknown as { client: KnexClient }).client;
  const connection = await client.acquireConnection();
  try {
    await connection.query(`SET plan_cache_mode = force_generic_plan`);
    await connection.query(
      `PREPARE fan_out_plan(text[], timestamptz, timestamptz, timestamptz) AS ${FAN_OUT_SQL}`,
    );
    const literal = `ARRAY[${ids.map((id) => `'${id}'`).join(',')}]::text[]`;
    const [from, to] = idTimeWindow(ids).map((t) => `'${t instanceof Date ? t.toISOString() : t}'`);
    const { rows } = await connection.query(
      `EXPLAIN (FORMAT JSON) EXECUTE fan_out_plan(${literal}, ${from}, ${to}, '-infinity')`,
    );
    return (rows[0] as { 'QUERY PLAN': unknown })['QUERY PLAN'];
  } finally {
    await connection.query(`DEALLOCATE fan_out_plan`).catch(() => undefined);
    await connection.query(`RESET plan_cache_mode`).catch(() => undefined);
    await client.releaseConnection(connection);
  }
}

interface KnexClient {
  acquireConnection(): Promise<{ query: (text: string) => Promise<{ rows: unknown[] }> }>;
  releaseConnection(connection: unknown): Promise<void>;
}

it('a batch of events is looked up by key, not through the backlog, in a partition never analyzed', async () => {
  const { tenantId } = await tenantWithSubscriptions(ctx);
  const partition = `events_p${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
  // No statistics while the test runs, whatever the server's autovacuum does.
  await knex.raw(`ALTER TABLE ?? SET (autovacuum_enabled = false)`, [partition]);
  const ids: string[] = [];
  for (let done = 0; done < BACKLOG; done += 5_000) {
    ids.push(...(await emitUsageEvents(knex, tenantId, 5_000)));
  }
  const { rows } = (await knex.raw(
    `SELECT (SELECT count(*)::int FROM pg_stats WHERE tablename = ?) AS columns_with_stats,
            (SELECT count(*)::int FROM event_outbox WHERE tenant_id = ?) AS backlog`,
    [partition, tenantId],
  )) as { rows: Array<{ columns_with_stats: number; backlog: number }> };
  const { columns_with_stats, backlog } = rows[0]!;
  expect(columns_with_stats).toBe(0);
  expect(backlog).toBeGreaterThanOrEqual(BACKLOG);

  const indexes = namesIn(await genericPlan(ids.slice(-20)), 'Index Name');
  expect(indexes).toContain('event_outbox_pkey');
  expect(indexes).toContain(`${partition}_pkey`);
  expect(indexes).not.toContain('event_outbox_tenant_idx');
});
