import type { Knex } from 'knex';

/**
 * A portal session remembers the API key that created it (docs/API.md, Tenant portal): a
 * session is live only while that key is not revoked, and revoking the key marks the key's
 * sessions revoked in the same transaction. Sessions made before this migration have no
 * creator (NULL) and live out their own expiry (at most 24 h). `last_used_at` is when a
 * portal token last authenticated a request (written at most once a minute per session).
 * Both columns are nullable without a default: adding them changes only the catalog.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `ALTER TABLE portal_sessions
       ADD COLUMN created_by_key_id text REFERENCES api_keys (id) ON DELETE CASCADE,
       ADD COLUMN last_used_at timestamptz(3)`,
  );
  await knex.raw(
    `CREATE INDEX portal_sessions_created_by_key_id_idx ON portal_sessions (created_by_key_id)`,
  );
  await knex.raw(
    `CREATE INDEX portal_sessions_tenant_id_created_at_idx
       ON portal_sessions (tenant_id, created_at DESC, id DESC)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `ALTER TABLE portal_sessions DROP COLUMN created_by_key_id, DROP COLUMN last_used_at`,
  );
  await knex.raw(`DROP INDEX IF EXISTS portal_sessions_tenant_id_created_at_idx`);
}
