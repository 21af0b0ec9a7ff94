import type { Knex } from 'knex';

/**
 * Test mode for SMS, leads and campaigns (docs/decisions/0117-test-mode-sms-leads-campaigns.md):
 * the mode of a message, a lead, an import, a campaign and a campaign's contact. Every row
 * made before, and every row telephony ingestion makes, is live: the default (a constant
 * default rewrites no table, the partitioned `sms_messages` included).
 *
 * A lead is unique per phone (and per email among leads without a phone) within its mode,
 * so a test lead may have a live lead's number; the repeat window of campaigns is kept per
 * mode too. The new unique indexes are built concurrently before the old ones are dropped,
 * so `leads` takes writes throughout: the migration commits its own steps, each idempotent,
 * and a run cut short is finished by the next.
 */
export const config = { transaction: false };

const TABLES = ['sms_messages', 'leads', 'lead_imports', 'campaigns', 'campaign_contacts'] as const;

/** [new index, its definition, the index it replaces, that one's definition]. */
const LEAD_KEYS = [
  [
    'leads_tenant_mode_phone_key',
    'leads (tenant_id, livemode, phone) WHERE phone IS NOT NULL',
    'leads_tenant_phone_key',
    'leads (tenant_id, phone) WHERE phone IS NOT NULL',
  ],
  [
    'leads_tenant_mode_email_phoneless_key',
    'leads (tenant_id, livemode, lower(email)) WHERE phone IS NULL AND email IS NOT NULL',
    'leads_tenant_email_phoneless_key',
    'leads (tenant_id, lower(email)) WHERE phone IS NULL AND email IS NOT NULL',
  ],
] as const;

const CONTACTS_KEY = 'campaign_contacts_mode_key';

/** Builds a unique index online; an invalid one left by an interrupted build is made again. */
async function uniqueIndex(knex: Knex, name: string, definition: string): Promise<void> {
  const { rows } = (await knex.raw(
    `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass(?)`,
    [name],
  )) as { rows: Array<{ valid: boolean }> };
  if (rows[0]?.valid) return;
  if (rows[0]) await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  await knex.raw(`CREATE UNIQUE INDEX CONCURRENTLY ${name} ON ${definition}`);
}

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS livemode boolean NOT NULL DEFAULT true`,
    );
  }
  for (const [name, definition, old] of LEAD_KEYS) {
    await uniqueIndex(knex, name, definition);
    await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${old}`);
  }
  // The contacts' key gains the mode: the index first (online), then the swap (brief lock;
  // the index takes the key's name). Done already when the key has the column.
  const { rows } = (await knex.raw(
    `SELECT 1 FROM pg_constraint c
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
      WHERE c.conname = 'campaign_contacts_pkey' AND a.attname = 'livemode'`,
  )) as { rows: unknown[] };
  if (rows.length === 0) {
    await uniqueIndex(knex, CONTACTS_KEY, 'campaign_contacts (tenant_id, livemode, phone)');
    await knex.transaction(async (trx) => {
      await trx.raw('ALTER TABLE campaign_contacts DROP CONSTRAINT campaign_contacts_pkey');
      await trx.raw(
        `ALTER TABLE campaign_contacts ADD CONSTRAINT campaign_contacts_pkey
           PRIMARY KEY USING INDEX ${CONTACTS_KEY}`,
      );
    });
  }
}

/** Puts the keys of one mode back (fails if a test row shares a live row's phone). */
export async function down(knex: Knex): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx.raw('ALTER TABLE campaign_contacts DROP CONSTRAINT campaign_contacts_pkey');
    await trx.raw('DELETE FROM campaign_contacts WHERE NOT livemode');
    await trx.raw('ALTER TABLE campaign_contacts ADD PRIMARY KEY (tenant_id, phone)');
  });
  for (const [name, , old, definition] of LEAD_KEYS) {
    await knex.raw(`CREATE UNIQUE INDEX IF NOT EXISTS ${old} ON ${definition}`);
    await knex.raw(`DROP INDEX IF EXISTS ${name}`);
  }
  for (const table of TABLES) {
    await knex.raw(`ALTER TABLE ${table} DROP COLUMN IF EXISTS livemode`);
  }
}
