import type { Knex } from 'knex';

// Timestamps are timestamptz(3): JavaScript dates carry milliseconds only, so storing more
// precision would make keyset cursors built from a Date skip or repeat rows.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tenants', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.integer('plan_minutes').notNullable().defaultTo(1000);
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    t.text('key_hash').notNullable().unique();
    t.text('display_prefix').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('last_used_at', 'timestamptz(3)');
    t.specificType('revoked_at', 'timestamptz(3)');
    t.index(['tenant_id']);
  });
  await knex.schema.createTable('receptionists', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('status').notNullable();
    t.text('phone_number');
    t.text('assistant_id');
    t.text('plan').notNullable().defaultTo('standard');
    t.text('greeting');
    t.text('webhook_url');
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('provisioned_at', 'timestamptz(3)');
    t.index(['tenant_id', 'created_at', 'id']);
  });
  // The outbox: an event is committed in the same transaction as the state change it reports,
  // then relayed to the queue. `fanned_out_at` is set once its deliveries exist.
  await knex.schema.createTable('events', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('receptionist_id');
    t.text('type').notNullable();
    t.jsonb('data').notNullable();
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('published_at', 'timestamptz(3)');
    t.specificType('fanned_out_at', 'timestamptz(3)');
  });
  await knex.raw(
    'CREATE INDEX events_pending_idx ON events (created_at) WHERE fanned_out_at IS NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('events');
  await knex.schema.dropTable('receptionists');
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('tenants');
}
