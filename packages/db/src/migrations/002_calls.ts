import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('calls', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('receptionist_id').notNullable().references('receptionists.id').onDelete('CASCADE');
    t.text('provider_call_id');
    t.text('direction').notNullable();
    t.text('status').notNullable();
    t.text('from_number').notNullable();
    t.text('to_number').notNullable();
    t.text('customer_name');
    t.text('customer_phone');
    t.integer('duration_seconds');
    t.text('outcome');
    t.text('end_reason');
    // Invariant: started_at never changes once a row exists (keyset order depends on it).
    t.specificType('started_at', 'timestamptz(3)').notNullable();
    t.specificType('answered_at', 'timestamptz(3)');
    t.specificType('ended_at', 'timestamptz(3)');
    t.jsonb('transcript');
    t.jsonb('recording');
    t.jsonb('booking');
    t.jsonb('cost');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.text('purpose');
    t.text('idempotency_key');
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
  });
  // Both list orders are served by an index scan, at any depth, without a sort.
  await knex.raw(
    'CREATE INDEX calls_tenant_order_idx ON calls (tenant_id, started_at DESC, id DESC)',
  );
  await knex.raw(
    'CREATE INDEX calls_receptionist_order_idx ON calls (receptionist_id, started_at DESC, id DESC)',
  );
  await knex.raw(
    'CREATE UNIQUE INDEX calls_provider_idx ON calls (receptionist_id, provider_call_id) WHERE provider_call_id IS NOT NULL',
  );
  // The backstop of outbound-call idempotency: one call per (tenant, Idempotency-Key), ever.
  await knex.raw(
    'CREATE UNIQUE INDEX calls_idempotency_idx ON calls (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL',
  );
  // Telephony messages already applied: a replayed message id is a no-op.
  await knex.schema.createTable('telephony_messages', (t) => {
    t.text('id').primary();
    t.text('type').notNullable();
    t.text('call_id');
    t.specificType('received_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('telephony_messages');
  await knex.schema.dropTable('calls');
}
