import knexFactory, { type Knex } from 'knex';

export type { Knex };

/**
 * Where a pool connects, and how long it keeps a connection no one uses (DATABASE_POOL_IDLE_MS;
 * unset, tarn's 30 s): a process's Config has both, and passes itself.
 */
export interface DatabaseSettings {
  readonly databaseUrl: string;
  readonly databasePoolIdleMs?: number;
}

export interface KnexOptions {
  poolMax?: number;
  /**
   * Operator commands report a failed connection themselves, in one line naming the URL
   * (explainDatabaseError): knex's own warning with a stack trace is left out.
   */
  quietConnectionErrors?: boolean;
  /**
   * Sessions that plan each prepared statement once, for every value (`plan_cache_mode =
   * force_generic_plan`), instead of again at each run. For a pool that runs only statements
   * whose generic plan is known to be good (its partition bounds are plain parameters, pruned
   * when the plan starts): knex's own queries with bindings would be planned so too.
   * Such a plan is made at a statement's first run, often at boot, when a queue table (the
   * outbox) is empty and a scan of it is cheapest; kept for the connection's life, it would
   * read the whole table at every run once a backlog comes. So these sessions also plan
   * without sequential scans (`enable_seqscan = off`) where an index serves: every statement
   * on such a pool reads and writes rows by their keys.
   */
  genericPlans?: boolean;
  /**
   * How long a query waits for a free connection before failing (3 s by default: a request
   * fails fast). A pool whose work queues by design, not a request's, waits longer.
   */
  acquireTimeoutMs?: number;
}

const isConnectionWarning = (message: string): boolean =>
  /^(Acquire connection error|Connection Error)/.test(message);

interface RawConnection {
  query(text: string, callback: (err: Error | null) => void): void;
}

/** Set on each new connection of a `genericPlans` pool, before knex hands it out. */
function planOnce(connection: RawConnection, done: (err: Error | null, c: unknown) => void) {
  connection.query('SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off', (err) =>
    done(err, connection),
  );
}

/**
 * Builds a knex instance, a pool of the process (each process has one, and the worker one
 * more for its delivery statements: `genericPlans`). Every commit is durable
 * (`synchronous_commit` is left on): a write opts into an asynchronous commit per
 * transaction, and only when it can be redone harmlessly (see `commit.ts`).
 * `acquireConnectionTimeout` is short on purpose: during a Postgres outage a request fails
 * fast (503) instead of hanging for knex's default minute.
 */
export function createKnex(database: string | DatabaseSettings, options: KnexOptions = {}): Knex {
  const db: DatabaseSettings = typeof database === 'string' ? { databaseUrl: database } : database;
  return knexFactory({
    client: 'pg',
    connection: db.databaseUrl,
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      ...(db.databasePoolIdleMs !== undefined && { idleTimeoutMillis: db.databasePoolIdleMs }),
      ...(options.genericPlans && { afterCreate: planOnce }),
    },
    acquireConnectionTimeout: options.acquireTimeoutMs ?? 3000,
    ...(options.quietConnectionErrors && {
      log: {
        warn: (message: string) => {
          if (!isConnectionWarning(message)) console.warn(message);
        },
      },
    }),
  });
}
