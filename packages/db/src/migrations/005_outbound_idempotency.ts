import type { Knex } from 'knex';

/**
 * Outbound calls: the request fingerprint behind each Idempotency-Key (so the Postgres
 * backstop can tell a retry from a reuse of the key with another body when Redis has no
 * entry), and the index the dialler's reconciler scans for calls still waiting to be dialled.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('calls', (t) => {
    // sha256 (hex) of the canonical JSON request body; set only with idempotency_key.
    t.text('idempotency_fingerprint');
  });
  await knex.raw("CREATE INDEX calls_queued_idx ON calls (created_at) WHERE status = 'queued'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS calls_queued_idx');
  await knex.schema.alterTable('calls', (t) => {
    t.dropColumn('idempotency_fingerprint');
  });
}
