import type { Knex } from 'knex';
import { atOrAfterFloorSql } from '../partitions/pending-floors';

/**
 * The outbox (migration 098, docs/decisions/0078-an-outbox-that-marks-nothing.md): one narrow
 * row per event still to fan out, written by the statement that writes the event and deleted
 * by the fan-out that makes its deliveries. An event is fanned out if and only if it has no
 * row here. The row is the fan-out's lock as the event's update was before: a second fan-out
 * of the event waits for the first one's delete, then finds no row and makes nothing.
 *
 * The event row itself is written once. Its `published_at` and `fanned_out_at` (the outbox
 * marks of the versions before 098) are set when it is stored, so that a process of such a
 * version, still running during an upgrade, never takes a new event for its own; rows those
 * versions left pending are moved here (adoptLegacyEvents).
 */

/** The outbox channel (OUTBOX_CHANNEL in packages/events) the relay listens on. */
const OUTBOX_NOTIFY_SQL = `pg_notify('switchboard_outbox', '')`;

/** What an insert of events returns for queuedSql. */
export const QUEUED_COLUMNS = 'id, tenant_id, created_at, traceparent';

/**
 * Two CTEs of the statement that writes events (data-modifying CTEs must be at a statement's
 * top level): `queued`, the outbox rows of the rows of CTE `cte` (with QUEUED_COLUMNS) that
 * satisfy `where`, and `notified`, one row when it woke the relay because there were any
 * (NOTIFY is delivered only if the transaction commits; Postgres folds repeats within one).
 */
export const queuedSql = (cte: string, where = 'TRUE'): string => `queued AS (
       INSERT INTO event_outbox (event_id, tenant_id, created_at, traceparent)
       SELECT id, tenant_id, created_at, traceparent FROM ${cte} WHERE ${where}
       ON CONFLICT DO NOTHING
    RETURNING 1
     ), notified AS (
       SELECT ${OUTBOX_NOTIFY_SQL} WHERE EXISTS (SELECT 1 FROM queued)
     )`;

/** Pending rows of the versions before 098, as two halves each read by its partial index (070). */
const legacyPendingSql = (grace: string): string => `
  SELECT id, created_at FROM events
   WHERE published_at IS NULL AND created_at < now() - ${grace}
     AND ${atOrAfterFloorSql('events', 'created_at')}
  UNION ALL
  SELECT id, created_at FROM events
   WHERE fanned_out_at IS NULL AND published_at IS NOT NULL AND created_at < now() - ${grace}
     AND ${atOrAfterFloorSql('events', 'created_at')}`;

/**
 * Moves the events `ids` (found by legacyPendingSql, dated from `from` to before `to`) into
 * the outbox: sets both marks, so that a process of a version before 098 leaves them alone,
 * and writes their outbox rows in the same statement. An event such a process is fanning out meanwhile
 * holds its row's lock; the update waits, then finds it fanned out and skips it. Notifies
 * the relay when it moved any.
 */
const ADOPT_SQL = `WITH moved AS (
       UPDATE events e SET published_at = coalesce(e.published_at, now()), fanned_out_at = now()
        WHERE e.id = ANY (?::text[]) AND e.created_at >= ? AND e.created_at < ?
          AND e.fanned_out_at IS NULL
    RETURNING ${QUEUED_COLUMNS}
     ), ${queuedSql('moved')}
     SELECT (SELECT count(*)::int FROM moved) AS moved,
            (SELECT count(*)::int FROM notified) AS notified`;

/**
 * Moves up to `limit` events left pending by a version before 098 (emitted by such a
 * version's API during an upgrade, or pending when the migration ran), stored `graceMs` ago
 * or more, into the outbox; returns how many it moved. Two statements: the look for them
 * reads the days from the events' pending floor on (and usually finds none: that is all that
 * runs), the move only the days of the rows found.
 */
export async function adoptLegacyEvents(db: Knex, graceMs: number, limit: number): Promise<number> {
  const grace = 'make_interval(secs => ?::float8)';
  const { rows: found } = (await db.raw(
    `SELECT id, created_at FROM (${legacyPendingSql(grace)}) p LIMIT ?`,
    [graceMs / 1000, graceMs / 1000, limit],
  )) as { rows: Array<{ id: string; created_at: Date }> };
  if (found.length === 0) return 0;
  // Read back as Dates, to the millisecond: a row written by SQL's now() is later by up to
  // a millisecond less one microsecond, hence the upper bound a millisecond above.
  const times = found.map((r) => r.created_at.getTime());
  const { rows } = (await db.raw(ADOPT_SQL, [
    found.map((r) => r.id),
    new Date(Math.min(...times)),
    new Date(Math.max(...times) + 1),
  ])) as { rows: Array<{ moved: number }> };
  return rows[0]?.moved ?? 0;
}
