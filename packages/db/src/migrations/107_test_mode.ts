import type { Knex } from 'knex';

/**
 * Test mode (docs/API.md, Test mode; docs/decisions/0111-test-mode.md): a key's mode, and
 * the mode of what it makes. Every row made before, and every row telephony ingestion makes,
 * is live: the default. A constant default rewrites no table (partitioned ones included).
 */
const TABLES = ['api_keys', 'calls', 'events', 'webhook_subscriptions'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS livemode boolean NOT NULL DEFAULT true`,
    );
  }
  // A tenant's requests to wipe its test-mode data (DELETE /test-data): the row is the
  // accepted request, written before the 202, so a crash cannot lose it; the worker's
  // reconciler takes up any that a lost job left running.
  await knex.schema.createTable('test_data_deletions', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('status').notNullable().defaultTo('running');
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('completed_at', 'timestamptz(3)');
  });
  await knex.raw(
    `CREATE INDEX test_data_deletions_running_idx ON test_data_deletions (created_at)
      WHERE status = 'running'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('test_data_deletions');
  for (const table of TABLES) {
    await knex.raw(`ALTER TABLE ${table} DROP COLUMN IF EXISTS livemode`);
  }
}
