import type { Knex } from 'knex';

/**
 * Per-tenant retention (docs/decisions/0059-retention-and-maintenance.md): days of delivery
 * history kept (null: the deployment's DELIVERY_RETENTION_DAYS) and days of call and SMS
 * history kept (null: kept for ever, the default).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => {
    t.integer('delivery_retention_days');
    t.integer('calls_retention_days');
    t.check('delivery_retention_days BETWEEN 1 AND 90', [], 'tenants_delivery_retention_check');
    t.check('calls_retention_days >= 1', [], 'tenants_calls_retention_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => {
    t.dropChecks(['tenants_delivery_retention_check', 'tenants_calls_retention_check']);
    t.dropColumn('delivery_retention_days');
    t.dropColumn('calls_retention_days');
  });
}
