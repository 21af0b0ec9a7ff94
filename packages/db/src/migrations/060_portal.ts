import type { Knex } from 'knex';

/**
 * Tenant portal (docs/API.md, Tenant portal): sessions created by an admin key. A session's
 * link carries a one-use code; trading it gives the page a portal token. Only SHA-256 hashes
 * of the code and the token are stored. `subscription_ids` NULL: every subscription of the
 * tenant. `tenants.portal_origins` is the `frame-ancestors` allow-list of the page (empty:
 * `'none'`, it cannot be framed).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('portal_sessions', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('code_hash').notNullable().unique();
    t.text('token_hash').unique();
    t.specificType('capabilities', 'text[]').notNullable();
    t.specificType('subscription_ids', 'uuid[]');
    t.specificType('expires_at', 'timestamptz(3)').notNullable();
    t.specificType('code_used_at', 'timestamptz(3)');
    t.specificType('revoked_at', 'timestamptz(3)');
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.alterTable('tenants', (t) => {
    t.specificType('portal_origins', 'text[]').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => t.dropColumn('portal_origins'));
  await knex.schema.dropTable('portal_sessions');
}
