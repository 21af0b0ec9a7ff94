import type { Knex } from 'knex';

/**
 * Deliveries: one row per (event, target). A target is a subscription or, for the legacy
 * per-receptionist webhook_url, the receptionist. Rows are the source of truth; BullMQ jobs
 * only say "look at this row now", so a lost job is re-created by the reconciler.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.index(['created_at'], 'events_unpublished_idx', {
      predicate: knex.whereNull('published_at'),
    });
  });
  await knex.schema.alterTable('receptionists', (t) => {
    // The legacy webhook_url's signing secret: generated on first use, never returned.
    t.text('webhook_secret_ciphertext');
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('event_id').notNullable().references('events.id').onDelete('CASCADE');
    // Deleting a subscription deletes its deliveries: pending ones are thereby cancelled.
    t.uuid('subscription_id').references('webhook_subscriptions.id').onDelete('CASCADE');
    t.text('receptionist_id').references('receptionists.id').onDelete('CASCADE');
    // pending → delivering → pending (retry) … → succeeded | failed | canceled
    t.text('status').notNullable().defaultTo('pending');
    // Attempts made in the current round; a manual retry starts a new round at 0.
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('round').notNullable().defaultTo(1);
    t.specificType('next_attempt_at', 'timestamptz(3)');
    // While `delivering`, the claim expires at this time (a crashed worker's claim lapses).
    t.specificType('locked_until', 'timestamptz(3)');
    t.integer('last_status_code');
    t.text('last_error');
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('completed_at', 'timestamptz(3)');
    t.specificType('first_success_at', 'timestamptz(3)');
  });
  await knex.raw(
    'CREATE UNIQUE INDEX webhook_deliveries_subscription_event_idx ON webhook_deliveries (subscription_id, event_id) WHERE subscription_id IS NOT NULL',
  );
  await knex.raw(
    'CREATE UNIQUE INDEX webhook_deliveries_receptionist_event_idx ON webhook_deliveries (receptionist_id, event_id) WHERE subscription_id IS NULL',
  );
  await knex.raw(
    'CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (subscription_id, created_at DESC, id DESC)',
  );
  await knex.raw(
    "CREATE INDEX webhook_deliveries_open_idx ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'delivering')",
  );
  await knex.raw('CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)');
  await knex.schema.createTable('webhook_delivery_attempts', (t) => {
    t.bigIncrements('id');
    t.text('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.integer('round').notNullable();
    t.integer('attempt').notNullable();
    t.integer('status_code');
    t.text('error');
    t.integer('duration_ms').notNullable();
    t.text('response_excerpt');
    t.specificType('attempted_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.unique(['delivery_id', 'round', 'attempt']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_delivery_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.alterTable('receptionists', (t) => t.dropColumn('webhook_secret_ciphertext'));
  await knex.schema.alterTable('events', (t) => t.dropIndex([], 'events_unpublished_idx'));
}
