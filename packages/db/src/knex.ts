import knexFactory, { type Knex } from 'knex';

export type { Knex };

interface PgConnection {
  query(sql: string, cb: (err: Error | null) => void): void;
}

export interface KnexOptions {
  poolMax?: number;
  /**
   * `off` lets a commit return before its WAL reaches disk. Only for processes whose every
   * write can be redone from other committed rows (the worker: relay, fan-out, claims and
   * attempt records are all recovered by the reconciler, and a redone delivery carries the
   * same event id). Never for the API, whose commits back a 201/202 or an outbox event.
   */
  synchronousCommit?: 'on' | 'off';
}

/**
 * Builds the process's one knex instance. `acquireConnectionTimeout` is short on purpose:
 * during a Postgres outage a request fails fast (503) instead of hanging for knex's default
 * minute.
 */
export function createKnex(databaseUrl: string, options: KnexOptions = {}): Knex {
  const synchronousCommit = options.synchronousCommit ?? 'on';
  return knexFactory({
    client: 'pg',
    connection: databaseUrl,
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      afterCreate: (conn: PgConnection, done: (err: Error | null, conn: PgConnection) => void) => {
        if (synchronousCommit === 'on') return done(null, conn);
        conn.query(`SET synchronous_commit = ${synchronousCommit}`, (err) => done(err, conn));
      },
    },
    acquireConnectionTimeout: 3000,
  });
}
