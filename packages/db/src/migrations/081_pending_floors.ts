import type { Knex } from 'knex';

/**
 * The oldest time a pending row of `events` (not fanned out) or `webhook_deliveries`
 * (pending or delivering) may carry in its partition key
 * (docs/decisions/0058-pending-floors-and-delivery-log-reads.md): the relay's and the reconcilers'
 * scans read the partitions from there on instead of every day kept. `-infinity` until the worker's
 * first sweep: everything is read.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('pending_floors', (t) => {
    t.text('table_name').primary();
    t.specificType('since', 'timestamptz(3)').notNullable();
  });
  await knex('pending_floors').insert([
    { table_name: 'events', since: knex.raw(`'-infinity'`) },
    { table_name: 'webhook_deliveries', since: knex.raw(`'-infinity'`) },
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('pending_floors');
}
