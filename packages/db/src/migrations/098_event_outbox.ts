import type { Knex } from 'knex';

/**
 * The outbox becomes a table of its own (packages/db/src/stores/event-outbox-sql.ts;
 * docs/decisions/0078-an-outbox-that-marks-nothing.md): a row per event still to fan out,
 * deleted by its fan-out, so that the event row is written once and never updated.
 *
 * The table is small (the events not yet fanned out) and its rows live for milliseconds:
 * autovacuum is told to clean it after a fixed number of deleted rows, not a share of a
 * table that is mostly empty.
 *
 * It moves no event (docs/decisions/0092-migration-098-moves-no-event.md): the events pending
 * when it runs are left as the versions before it keep them, for those versions' processes,
 * still running during an upgrade, to fan out; the reconciler of this version moves the ones
 * still pending after its grace period into the outbox (EventsStore.adoptLegacy), as it does
 * for the events those processes emit during the upgrade. The partial indexes of migration
 * 070 stay for that look (new rows are not in them: both marks are set when an event is
 * stored).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE IF NOT EXISTS event_outbox (
      event_id text PRIMARY KEY,
      tenant_id text NOT NULL,
      created_at timestamptz NOT NULL,
      traceparent text
    ) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
            autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000)`);
  await knex.raw(
    `CREATE INDEX IF NOT EXISTS event_outbox_tenant_idx ON event_outbox (tenant_id, created_at)`,
  );
}

/** The events still in the outbox become unpublished rows again, as the earlier versions keep them. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE events e SET published_at = NULL, fanned_out_at = NULL
      FROM event_outbox o
     WHERE e.id = o.event_id AND e.created_at = o.created_at`);
  await knex.raw('DROP TABLE IF EXISTS event_outbox');
}
