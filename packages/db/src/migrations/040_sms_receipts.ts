import type { Knex } from 'knex';

/**
 * SMS at carrier depth (docs/API.md, SMS): delivery receipts, scheduled sends, the replies
 * the carriers expect, and the opt-out list's keyword. Columns are added on the parent
 * `sms_messages` table, so they reach every partition.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sms_messages', (t) => {
    // outbound: scheduled → queued | cancelled; queued → sending → sent → delivered |
    // undelivered; queued | sending → failed. Statuses only move forward.
    t.specificType('send_at', 'timestamptz(3)');
    t.specificType('delivered_at', 'timestamptz(3)');
    // When the message failed, was reported undelivered, or was cancelled.
    t.specificType('failed_at', 'timestamptz(3)');
    t.text('error_message');
    // A reply the SMS path sent on its own to a keyword: opt_out | opt_in | help. The opt_out
    // confirmation is the only message ever sent to a number that opted out.
    t.text('reply_kind');
  });
  // Receipts find their message by the carrier's id, per receptionist.
  await knex.raw(
    "CREATE INDEX sms_outbound_provider_idx ON sms_messages (receptionist_id, provider_message_id) WHERE direction = 'outbound' AND provider_message_id IS NOT NULL",
  );
  // What the scheduler scans: scheduled messages by when they are due.
  await knex.raw(
    "CREATE INDEX sms_scheduled_idx ON sms_messages (send_at) WHERE status = 'scheduled'",
  );
  // Receipts that came before their message was marked sent (or for a message this
  // deployment does not know): kept until the message is sent, then applied.
  await knex.schema.createTable('sms_pending_receipts', (t) => {
    t.text('receptionist_id').notNullable();
    t.text('provider_message_id').notNullable();
    t.text('status').notNullable(); // delivered | undelivered
    t.text('error_code');
    t.specificType('occurred_at', 'timestamptz(3)').notNullable();
    t.specificType('created_at', 'timestamptz(3)').notNullable().defaultTo(knex.fn.now());
    t.primary(['receptionist_id', 'provider_message_id']);
  });
  // The keyword that opted a phone out (or back in), shown by GET /sms/opt-outs.
  await knex.schema.alterTable('sms_opt_outs', (t) => {
    t.text('keyword');
  });
  await knex.raw(
    'CREATE INDEX sms_opt_outs_list_idx ON sms_opt_outs (tenant_id, changed_at DESC, phone DESC) WHERE opted_out',
  );
  // Per-tenant reply texts; NULL means the documented default.
  await knex.schema.alterTable('tenants', (t) => {
    t.text('sms_reply_opt_out');
    t.text('sms_reply_opt_in');
    t.text('sms_reply_help');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => {
    t.dropColumn('sms_reply_opt_out');
    t.dropColumn('sms_reply_opt_in');
    t.dropColumn('sms_reply_help');
  });
  await knex.raw('DROP INDEX sms_opt_outs_list_idx');
  await knex.schema.alterTable('sms_opt_outs', (t) => t.dropColumn('keyword'));
  await knex.schema.dropTable('sms_pending_receipts');
  await knex.raw('DROP INDEX sms_scheduled_idx');
  await knex.raw('DROP INDEX sms_outbound_provider_idx');
  await knex.schema.alterTable('sms_messages', (t) => {
    for (const c of ['send_at', 'delivered_at', 'failed_at', 'error_message', 'reply_kind']) {
      t.dropColumn(c);
    }
  });
}
