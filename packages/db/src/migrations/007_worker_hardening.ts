import type { Knex } from 'knex';

/**
 * Delivery claims are counted per attempt. `claims` is how many times the delivery's current
 * attempt was claimed without its outcome being recorded (reset to 0 when an attempt is
 * recorded or a new round starts; a claim given back unused takes itself off). It names the
 * job of each claim generation (so a re-add after a crashed claim is not blocked by the dead
 * worker's job), and it bounds how often one attempt is sent: an attempt whose earlier
 * claims never recorded an outcome is given up instead of being sent for ever.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.integer('claims').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('claims');
  });
}
