import knexFactory, { type Knex } from 'knex';

export type { Knex };

export interface KnexOptions {
  poolMax?: number;
  /**
   * Operator commands report a failed connection themselves, in one line naming the URL
   * (explainDatabaseError): knex's own warning with a stack trace is left out.
   */
  quietConnectionErrors?: boolean;
}

const isConnectionWarning = (message: string): boolean =>
  /^(Acquire connection error|Connection Error)/.test(message);

/**
 * Builds the process's one knex instance. Every commit is durable (`synchronous_commit` is
 * left on): a write opts into an asynchronous commit per transaction, and only when it can
 * be redone harmlessly (see `commit.ts`). `acquireConnectionTimeout` is short on purpose:
 * during a Postgres outage a request fails fast (503) instead of hanging for knex's default
 * minute.
 */
export function createKnex(databaseUrl: string, options: KnexOptions = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: databaseUrl,
    pool: { min: 0, max: options.poolMax ?? 10 },
    acquireConnectionTimeout: 3000,
    ...(options.quietConnectionErrors && {
      log: {
        warn: (message: string) => {
          if (!isConnectionWarning(message)) console.warn(message);
        },
      },
    }),
  });
}
