import { ensureAhead, PARTITIONED_TABLES, type Knex } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { onOneConnection } from '../support/plans';

// The uniqueness triggers of deliveries and attempts look for a holder from a day before
// `now()` to an hour after it (packages/db/src/migrations/097_uniqueness_bounded_above.ts):
// an insert looks into yesterday's and today's partitions (tomorrow's in the last hour of a
// day), never the days made ahead of the clock or the default partition. Counted by
// Postgres itself: every index scan of every partition, flushed by the inserting session. The
// relay's rows, inserted claimed, are not looked up at all (migration 109).
let ctx: TestContext;
let knex: Knex;

beforeAll(async () => {
  ctx = await createTestContext();
  knex = ctx.deps.knex;
});
afterAll(async () => {
  await ctx?.close();
});

/** `table`'s partition of the day `days` from today (UTC), as the partitioning names it. */
const partition = (table: string, days: number): string =>
  `${table}_p${new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '')}`;

/** Runs `sql` on one connection, then the index scans of each of `tables`' partitions. */
const scansAfter = (sql: string, tables: string[]): Promise<Map<string, number>> =>
  onOneConnection(knex, async (connection) => {
    await connection.query(sql);
    await connection.query('SELECT pg_stat_force_next_flush()');
    const { rows } = (await connection.query(
      `SELECT i.relname AS partition, sum(i.idx_scan)::int AS scans
         FROM pg_stat_user_indexes i JOIN pg_inherits h ON h.inhrelid = i.relid
        WHERE h.inhparent::regclass::text = ANY ($1)
        GROUP BY i.relname`,
      [tables],
    )) as { rows: Array<{ partition: string; scans: number }> };
    return new Map(rows.map((r) => [r.partition, r.scans]));
  });

it('an inserted delivery or attempt is checked against yesterday and today only', async () => {
  const tables = ['webhook_deliveries', 'webhook_delivery_attempts'];
  // The days ahead of this test's clock, as the partition maintenance keeps them: those the
  // migrations made are a day short once the date changed since (a run past midnight UTC).
  for (const t of PARTITIONED_TABLES.filter((p) => tables.includes(p.table))) {
    await ensureAhead(knex, t, new Date(), 5_000);
  }
  const scans = await scansAfter(
    `INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, next_attempt_at)
       VALUES ('dlv_bounds', 'ten_bounds', 'evt_bounds', gen_random_uuid(), now());
     INSERT INTO webhook_delivery_attempts (delivery_id, round, attempt, error, duration_ms, attempted_at)
       VALUES ('dlv_bounds', 1, 1, 'timeout', 10000, now())`,
    tables,
  );
  for (const table of tables) {
    // The lookup ran: today's partition was looked into.
    expect(scans.get(partition(table, 0))).toBeGreaterThan(0);
    const ahead = [2, 3, 4, 5, 6, 7].map((d) => partition(table, d));
    // Those days exist (made ahead of the clock), with the default partition.
    expect(ahead.every((p) => scans.has(p))).toBe(true);
    expect(scans.has(`${table}_default`)).toBe(true);
    expect([...ahead, `${table}_default`].map((p) => [p, scans.get(p)])).toEqual(
      [...ahead, `${table}_default`].map((p) => [p, 0]),
    );
  }
});

it("skips the lookup for the relay's rows, and still refuses another insert's duplicate", async () => {
  const tables = ['webhook_deliveries'];
  const subscription = '3f0c6a8e-3b7e-4d6a-9a53-1f2f4e5d6c7b';
  const insert = (id: string, status: string) =>
    `INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, next_attempt_at, status)
       VALUES ('${id}', 'ten_relay', 'evt_relay', '${subscription}', now(), '${status}')`;
  const total = (scans: Map<string, number>) => [...scans.values()].reduce((n, s) => n + s, 0);
  const before = total(await scansAfter('SELECT 1', tables));
  // Inserted claimed, as only the relay does (migration 109): no index of any partition read.
  const relayed = total(await scansAfter(insert('dlv_relayed', 'delivering'), tables));
  expect(relayed).toBe(before);
  // Inserted pending, as a recovery does: looked up (yesterday's and today's partitions).
  const recovered = total(await scansAfter(insert('dlv_recovered', 'pending'), tables));
  expect(recovered).toBeGreaterThan(relayed);
  // That second insert, of the same (target, event), met the relay's row and was skipped.
  const { rows } = (await knex.raw(
    `SELECT id FROM webhook_deliveries WHERE event_id = 'evt_relay' ORDER BY id`,
  )) as { rows: Array<{ id: string }> };
  expect(rows.map((r) => r.id)).toEqual(['dlv_relayed']);
});
