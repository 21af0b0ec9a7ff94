import type { Knex } from 'knex';

/**
 * Short lead searches from an index (docs/LEADS.md, Search). A `q` of one or two characters
 * has no trigram, so the GIN indexes of 010 cannot answer it; such a `q` matches the start of
 * a name or an email (case-insensitive) or of a phone's digits, and these btrees answer that
 * prefix as a range, per tenant. `text_pattern_ops` makes `LIKE 'ab%'` a range scan whatever
 * the database's collation.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'CREATE INDEX leads_tenant_name_prefix_idx ON leads (tenant_id, lower(name) text_pattern_ops)',
  );
  await knex.raw(
    'CREATE INDEX leads_tenant_email_prefix_idx ON leads (tenant_id, lower(email) text_pattern_ops)',
  );
  await knex.raw(
    'CREATE INDEX leads_tenant_phone_prefix_idx ON leads (tenant_id, phone text_pattern_ops)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX leads_tenant_name_prefix_idx');
  await knex.raw('DROP INDEX leads_tenant_email_prefix_idx');
  await knex.raw('DROP INDEX leads_tenant_phone_prefix_idx');
}
