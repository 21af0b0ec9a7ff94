import type { Knex } from 'knex';

/**
 * SMS campaigns (docs/API.md, Campaigns): the campaign with its counters, and one row per
 * distinct recipient, written once when the API accepts the campaign. A recipient's state
 * is claimed in Postgres before its message exists, so no crash, restart or second worker
 * ever makes two messages for one recipient.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('campaigns', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('receptionist_id').notNullable().references('receptionists.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('message').notNullable();
    // queued → running → completed; queued | running → canceled.
    t.text('status').notNullable();
    t.integer('send_rate_per_minute').notNullable();
    // Distinct recipients, opted-out ones included: fixed when the campaign is accepted.
    t.integer('recipients').notNullable();
    // Outcomes so far; `sent + failed + opted_out = recipients` completes a running campaign.
    t.integer('sent').notNullable().defaultTo(0);
    t.integer('failed').notNullable().defaultTo(0);
    t.integer('opted_out').notNullable().defaultTo(0);
    t.text('idempotency_key');
    t.text('idempotency_fingerprint');
    // Invariant: created_at never changes (keyset order depends on it).
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.specificType('started_at', 'timestamptz(3)');
    t.specificType('completed_at', 'timestamptz(3)');
    t.specificType('canceled_at', 'timestamptz(3)');
  });
  await knex.raw(
    'CREATE INDEX campaigns_tenant_recent_idx ON campaigns (tenant_id, created_at DESC, id DESC)',
  );
  await knex.raw(
    'CREATE UNIQUE INDEX campaigns_idempotency_idx ON campaigns (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL',
  );
  // What every worker's campaign tick scans: the campaigns still to start or still sending.
  await knex.raw(
    "CREATE INDEX campaigns_open_idx ON campaigns (created_at) WHERE status IN ('queued', 'running')",
  );

  await knex.schema.createTable('campaign_recipients', (t) => {
    t.text('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    // The sending order, 1..recipients.
    t.integer('seq').notNullable();
    t.text('phone').notNullable();
    // The lead's name when the campaign was accepted: what `{{name}}` becomes.
    t.text('name');
    t.text('lead_id');
    // pending → sending (its SMS exists, in the SMS path) → sent | failed;
    // pending → opted_out (skipped) | canceled; sending → opted_out (STOP before the hand-off).
    t.text('state').notNullable().defaultTo('pending');
    t.text('sms_id');
    t.specificType('updated_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.primary(['campaign_id', 'seq']);
    // Deduplicated by phone: one recipient per number per campaign, whatever the input said.
    t.unique(['campaign_id', 'phone']);
  });
  // The next recipient to claim, in order, without reading the ones already done.
  await knex.raw(
    "CREATE INDEX campaign_recipients_pending_idx ON campaign_recipients (campaign_id, seq) WHERE state = 'pending'",
  );
  // The campaign reconciler's look at messages in flight (normally a handful per campaign).
  await knex.raw(
    "CREATE INDEX campaign_recipients_sending_idx ON campaign_recipients (updated_at) WHERE state = 'sending'",
  );
  // An SMS outcome finds its recipient by the message id.
  await knex.raw(
    'CREATE UNIQUE INDEX campaign_recipients_sms_idx ON campaign_recipients (sms_id) WHERE sms_id IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('campaign_recipients');
  await knex.schema.dropTable('campaigns');
}
