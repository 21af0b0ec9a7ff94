import knexFactory, { type Knex } from 'knex';

export type { Knex };

/**
 * Builds the process's one knex instance. `acquireConnectionTimeout` is short on purpose:
 * during a Postgres outage a request fails fast (503) instead of hanging for knex's default
 * minute.
 */
export function createKnex(databaseUrl: string, options: { poolMax?: number } = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: databaseUrl,
    pool: { min: 0, max: options.poolMax ?? 10 },
    acquireConnectionTimeout: 3000,
  });
}
