import type { Knex } from 'knex';

// Webhook subscriptions. The signing secret is stored only as a SecretBox token
// (`secret_ciphertext`, AES-256-GCM bound to tenant and id) with the id of the key that
// encrypted it, so rows under a retired key can be found and re-encrypted. Timestamps are
// timestamptz(3) like everywhere (keyset cursors carry milliseconds).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_subscriptions', (t) => {
    t.uuid('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('url').notNullable();
    // Empty array = every event.
    t.specificType('events', 'text[]').notNullable().defaultTo('{}');
    t.text('description');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.text('secret_ciphertext').notNullable();
    t.text('secret_key_id').notNullable();
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('disabled_at', 'timestamptz(3)');
    t.text('disabled_reason');
    t.specificType('last_delivery_at', 'timestamptz(3)');
    t.specificType('last_success_at', 'timestamptz(3)');
    t.specificType('last_failure_at', 'timestamptz(3)');
  });
  // Serves the tenant's list, newest first, at any depth (keyset on created_at, id).
  await knex.raw(
    'CREATE INDEX webhook_subscriptions_tenant_created_idx ' +
      'ON webhook_subscriptions (tenant_id, created_at DESC, id DESC)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_subscriptions');
}
