import type { Knex } from 'knex';

/**
 * SMS (docs/API.md, SMS): one row per message in either direction, and the per-tenant
 * opt-out list that inbound keywords maintain and every send checks.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sms_messages', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('receptionist_id').notNullable().references('receptionists.id').onDelete('CASCADE');
    t.text('direction').notNullable(); // inbound | outbound
    // outbound: queued → sending (claimed, handed to the provider at most once) → sent | failed;
    // inbound: received. `sending` is internal: the API shows it as `queued`.
    t.text('status').notNullable();
    t.text('from_number').notNullable();
    t.text('to_number').notNullable();
    t.text('message').notNullable();
    t.integer('segments').notNullable();
    t.text('campaign_id');
    t.text('error_code');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    // Inbound: the carrier's id. Outbound: the provider's id once it accepted the message.
    t.text('provider_message_id');
    t.text('idempotency_key');
    t.text('idempotency_fingerprint');
    // Invariant: created_at never changes once a row exists (keyset order depends on it).
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('sent_at', 'timestamptz(3)');
    t.specificType('received_at', 'timestamptz(3)');
  });
  // The per-receptionist history, newest first, served by an index scan at any depth.
  await knex.raw(
    'CREATE INDEX sms_receptionist_order_idx ON sms_messages (receptionist_id, created_at DESC, id DESC)',
  );
  // The backstop of send idempotency: one message per (tenant, Idempotency-Key), ever.
  await knex.raw(
    'CREATE UNIQUE INDEX sms_idempotency_idx ON sms_messages (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL',
  );
  // A carrier that reports one message twice (under two message ids) stores it once.
  await knex.raw(
    "CREATE UNIQUE INDEX sms_inbound_provider_idx ON sms_messages (receptionist_id, provider_message_id) WHERE direction = 'inbound'",
  );
  // What the reconciler scans: messages waiting for, or stuck in, a send.
  await knex.raw(
    "CREATE INDEX sms_open_idx ON sms_messages (updated_at) WHERE status IN ('queued', 'sending')",
  );

  // One row per (tenant, phone) that ever sent a keyword; `opted_out` is its current consent.
  // `changed_at` is when the deciding keyword was sent, so keywords applied out of order
  // still leave the consent of the latest one.
  await knex.schema.createTable('sms_opt_outs', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('phone').notNullable();
    t.boolean('opted_out').notNullable();
    t.specificType('changed_at', 'timestamptz(3)').notNullable();
    t.text('sms_id').notNullable();
    t.primary(['tenant_id', 'phone']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sms_opt_outs');
  await knex.schema.dropTable('sms_messages');
}
