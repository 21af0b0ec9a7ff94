import type { Knex } from 'knex';
import { partitionRanges, q } from './catalog';
import { defaultName, PARTITIONED_TABLES, type PartitionedTable } from './spec';

/**
 * Pending floors (migration 081, docs/decisions/0058-pending-floors-and-delivery-log-reads.md): for
 * each daily table the relay and the reconcilers scan for work, a time such that every pending row
 * has its partition key at or after it. The scans add `key >= floor`, so they read the days from
 * the oldest pending row's on, not every day kept.
 *
 * The invariant is kept by two writers:
 * - `sweepPendingFloor` (the worker, every minute) sets the floor to the oldest pending row's
 *   day found in the whole table, or an hour ago if that is older. The hour covers rows not
 *   yet visible to the sweep: a row is written pending with a key of about its writer's
 *   `now()` (a fan-out's delivery: Postgres' transaction time; an event: the application's
 *   clock), by a transaction that commits within the hour. A row that still lands below the
 *   floor (a transaction open over an hour, an application clock behind Postgres' by over an
 *   hour, a range made for rows that sat in the default partition) is found by the next
 *   sweep, which lowers the floor to it: such a row waits a minute, it is never lost;
 * - a statement that makes an old row pending again (a manual retry's new round, a
 *   recovery's resend: the only ways a final delivery reopens) lowers the floor to that
 *   row's key in its own transaction. It locks the floor's row to do so, and the sweep reads
 *   the table only once it holds that lock, so the sweep either sees the reopened row or
 *   runs before the reopening statement, which then lowers the floor it set.
 * An event never becomes pending again once fanned out, nor a delivery once final, except
 * by those two statements.
 */
export type FloorTable = 'events' | 'webhook_deliveries';

/** The rows the scans look for, per table: what "pending" means for the floor. */
const PENDING: Record<FloorTable, string> = {
  // Unpublished events are not fanned out either (the relay's); published ones not fanned
  // out are the reconciler's.
  events: 'fanned_out_at IS NULL',
  webhook_deliveries: "status IN ('pending', 'delivering')",
};

/** How far behind the sweep's clock a row not yet committed may be keyed. */
const NOT_YET_VISIBLE = "interval '1 hour'";

/** How often the worker sweeps (each worker; a sweep in progress elsewhere is skipped). */
export const PENDING_FLOOR_SWEEP_MS = 60_000;

/**
 * SQL: `column` at or after the floor of `table`. An uncorrelated subquery: Postgres reads
 * it once per statement and skips the partitions below it while running (run-time pruning),
 * whether the statement is planned once (prepared) or each time.
 */
export const atOrAfterFloorSql = (table: FloorTable, column: string): string =>
  `${column} >= (SELECT since FROM pending_floors WHERE table_name = '${table}')`;

/**
 * SQL: an UPDATE (for a data-modifying CTE) that lowers the floor of `webhook_deliveries` to
 * `minKeySql` (the oldest key of the deliveries a statement made pending again), when it is
 * not null. It always takes the floor row's lock then, even when the floor is already lower:
 * that lock is what orders it with a sweep (see above).
 */
export const lowerDeliveriesFloorSql = (minKeySql: string): string =>
  `UPDATE pending_floors SET since = least(since, ${minKeySql})
    WHERE table_name = 'webhook_deliveries' AND ${minKeySql} IS NOT NULL`;

const spec = (table: FloorTable): PartitionedTable =>
  PARTITIONED_TABLES.find((t) => t.table === table) as PartitionedTable;

/**
 * Sets the floor of `table` from the whole table: the start of the oldest range partition
 * holding a pending row (one index probe per partition, oldest first, stopping at the first
 * found), the oldest pending row of the default partition, or an hour ago, whichever is
 * oldest. Returns the new floor, or null when another sweep (or a reopening statement)
 * holds the floor's row: that one decides, this one skips its turn.
 */
export async function sweepPendingFloor(db: Knex, table: FloorTable): Promise<Date | null> {
  const t = spec(table);
  return db.transaction(async (trx) => {
    const { rows: held } = (await trx.raw(
      `SELECT since FROM pending_floors WHERE table_name = ? FOR UPDATE SKIP LOCKED`,
      [table],
    )) as { rows: unknown[] };
    if (held.length === 0) return null;
    // Read after the lock: every statement that reopened a row before it has committed.
    const ranges = await partitionRanges(trx, t);
    const ladder = ranges
      .map(
        (r) =>
          `WHEN EXISTS (SELECT 1 FROM ${q(r.name)} WHERE ${PENDING[table]}) ` +
          `THEN ${r.start ? `'${r.start.toISOString()}'` : `'-infinity'`}::timestamptz`,
      )
      .join(' ');
    const oldest = `least(
        (SELECT min(${t.key}) FROM ${q(defaultName(t))} WHERE ${PENDING[table]}),
        ${ladder ? `CASE ${ladder} END` : 'NULL'},
        now() - ${NOT_YET_VISIBLE})`;
    const { rows } = (await trx.raw(
      `UPDATE pending_floors SET since = ${oldest} WHERE table_name = ? RETURNING since`,
      [table],
    )) as { rows: Array<{ since: Date }> };
    return rows[0]?.since ?? null;
  });
}
