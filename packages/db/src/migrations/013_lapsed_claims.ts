import type { Knex } from 'knex';

/**
 * Claimed deliveries by the end of their claim: the worker looks for lapsed claims (a worker
 * killed mid-attempt) every second, so that the attempt runs again as soon as its claim ends.
 * Only rows being delivered are indexed: a few per worker slot.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    "CREATE INDEX webhook_deliveries_claimed_idx ON webhook_deliveries (locked_until) WHERE status = 'delivering'",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX webhook_deliveries_claimed_idx');
}
