import type { Knex } from 'knex';

/**
 * Webhook self-service (docs/API.md, Webhooks): edit, rotation with overlap, idempotent
 * create, per-endpoint throttling, the readable delivery log, recoveries and operational
 * events. Columns of the delivery tables are added on the parent table (ALTER TABLE works the
 * same on a partitioned one).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    // Attempts per second across every worker; NULL = unlimited.
    t.integer('rate_limit_per_second');
    // The secret before the last rotation, kept (encrypted) until the overlap ends.
    t.text('previous_secret_ciphertext');
    t.text('previous_secret_key_id');
    t.specificType('secret_overlap_ends_at', 'timestamptz(3)');
    // The Postgres backstop of Idempotency-Key on POST /webhooks.
    t.text('idempotency_key');
    t.text('idempotency_fingerprint');
    // webhook.failing sent for this streak: 0 none, 1 at half, 2 at three quarters.
    t.integer('failing_level').notNullable().defaultTo(0);
  });
  await knex.raw(`
    ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_rate_limit_check
      CHECK (rate_limit_per_second IS NULL OR rate_limit_per_second BETWEEN 1 AND 1000)`);
  await knex.raw(
    'CREATE UNIQUE INDEX webhook_subscriptions_idempotency_idx ' +
      'ON webhook_subscriptions (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL',
  );
  await knex.schema.alterTable('webhook_delivery_attempts', (t) => {
    // What was sent (signatures included, never the secret) and what came back.
    t.jsonb('request_headers');
    t.jsonb('response_headers');
  });
  await knex.schema.createTable('webhook_recoveries', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('subscription_id')
      .notNullable()
      .references('webhook_subscriptions.id')
      .onDelete('CASCADE');
    t.specificType('since', 'timestamptz(3)').notNullable();
    t.specificType('until', 'timestamptz(3)').notNullable();
    // running → completed
    t.text('status').notNullable().defaultTo('running');
    // The deliveries of the recovery (resent or first sent), fixed when it is created.
    t.specificType('delivery_ids', 'text[]').notNullable().defaultTo('{}');
    t.integer('found').notNullable().defaultTo(0);
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('completed_at', 'timestamptz(3)');
  });
  // At most one running recovery per subscription (the 409 recovery_in_progress).
  await knex.raw(
    'CREATE UNIQUE INDEX webhook_recoveries_running_idx ON webhook_recoveries (subscription_id) ' +
      "WHERE status = 'running'",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_recoveries');
  await knex.schema.alterTable('webhook_delivery_attempts', (t) => {
    t.dropColumn('request_headers');
    t.dropColumn('response_headers');
  });
  await knex.raw('DROP INDEX webhook_subscriptions_idempotency_idx');
  await knex.raw(
    'ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_rate_limit_check',
  );
  await knex.schema.alterTable('webhook_subscriptions', (t) => {
    for (const c of [
      'rate_limit_per_second',
      'previous_secret_ciphertext',
      'previous_secret_key_id',
      'secret_overlap_ends_at',
      'idempotency_key',
      'idempotency_fingerprint',
      'failing_level',
    ]) {
      t.dropColumn(c);
    }
  });
}
