import type { Knex } from 'knex';

/**
 * Per-tenant API rate limits (docs/API.md, Rate limits): a token bucket per API key that
 * refills at `rate_limit_per_second` and holds at most `rate_limit_burst` requests. Both
 * NULL (every existing tenant) means the deployment's defaults (RATE_LIMIT_PER_SECOND,
 * RATE_LIMIT_BURST); the operator CLI sets or clears both at once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => {
    t.integer('rate_limit_per_second');
    t.integer('rate_limit_burst');
  });
  // A bucket smaller than one second of its rate is refused (the RateLimit-Policy window
  // is burst ÷ rate seconds, at least one).
  await knex.raw(`
    ALTER TABLE tenants ADD CONSTRAINT tenants_rate_limit_check CHECK (
      (rate_limit_per_second IS NULL AND rate_limit_burst IS NULL) OR
      (rate_limit_per_second > 0 AND rate_limit_burst >= rate_limit_per_second)
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE tenants DROP CONSTRAINT tenants_rate_limit_check');
  await knex.schema.alterTable('tenants', (t) => {
    t.dropColumn('rate_limit_per_second');
    t.dropColumn('rate_limit_burst');
  });
}
