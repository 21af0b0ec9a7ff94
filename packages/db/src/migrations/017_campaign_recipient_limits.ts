import type { Knex } from 'knex';

/**
 * Campaign limits per recipient (docs/API.md, Campaigns): a tenant's campaigns text one
 * number at most once per window. `campaign_contacts` holds, per tenant and number, when a
 * campaign last texted it; the message's own transaction moves it (an upsert that only
 * succeeds outside the window), so two campaigns racing for one number cannot both win.
 * A recipient refused by the window ends `skipped`, counted in `campaigns.skipped`;
 * `allow_repeat` campaigns are not refused (they still record the contact).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.boolean('allow_repeat').notNullable().defaultTo(false);
    t.integer('skipped').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('campaign_contacts', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.text('phone').notNullable();
    t.specificType('last_sent_at', 'timestamptz(3)').notNullable();
    t.primary(['tenant_id', 'phone']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('campaign_contacts');
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('allow_repeat');
    t.dropColumn('skipped');
  });
}
