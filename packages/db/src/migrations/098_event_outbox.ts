import type { Knex } from 'knex';
import { adoptLegacyEvents } from '../stores/event-outbox-sql';

/**
 * The outbox becomes a table of its own (packages/db/src/stores/event-outbox-sql.ts;
 * docs/DECISIONS.md, An outbox that marks nothing): a row per event still to fan out,
 * deleted by its fan-out, so that the event row is written once and never updated.
 *
 * The table is small (the events not yet fanned out) and its rows live for milliseconds:
 * autovacuum is told to clean it after a fixed number of deleted rows, not a share of a
 * table that is mostly empty. The events pending when it runs are moved into it
 * (adoptLegacyEvents, in batches); the partial indexes of migration 070 stay for the
 * reconciler's adoption of rows a version before this one still writes during an upgrade
 * (new rows are not in them: both marks are set when an event is stored).
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
  // Bounded: each batch moves up to 10,000 rows; a batch that moves none ends it.
  for (let i = 0; i < 1_000_000; i++) {
    if ((await adoptLegacyEvents(knex, 0, 10_000)) === 0) break;
  }
}

/** The events still in the outbox become unpublished rows again, as the earlier versions keep them. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE events e SET published_at = NULL, fanned_out_at = NULL
      FROM event_outbox o
     WHERE e.id = o.event_id AND e.created_at = o.created_at`);
  await knex.raw('DROP TABLE IF EXISTS event_outbox');
}
