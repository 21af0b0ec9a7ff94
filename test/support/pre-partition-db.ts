import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { createKnex, type Knex } from '@switchboard/db';
import { migrationSource } from '../../packages/db/src/migrations';
import { databaseUrl, runId, SERVER_URL } from './env';

/** The last migration before partitioning (020). */
export const BEFORE_PARTITIONING = '012_rate_limits';

export interface ScratchDatabase {
  name: string;
  knex: Knex;
  /** Closes its connections (the global teardown drops the database). */
  close: () => Promise<void>;
}

/** A new database migrated up to `last` (a migration's name) only: a schema of the past. */
export async function createDatabaseMigratedTo(last: string): Promise<ScratchDatabase> {
  const upTo: Knex.MigrationSource<string> = {
    ...migrationSource,
    getMigrations: async (loadExtensions) =>
      (await migrationSource.getMigrations(loadExtensions)).filter((n) => n <= last),
  };
  const name = `sbt_${runId()}_${randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: SERVER_URL, pool: { min: 0, max: 1 } });
  await admin.raw('CREATE DATABASE ??', [name]).finally(() => admin.destroy());
  const knex = createKnex(databaseUrl(name), { poolMax: 3 });
  await knex.migrate.latest({ migrationSource: upTo });
  return {
    name,
    knex,
    close: () => knex.destroy(),
  };
}

/** A new database migrated up to 012 only (the schema before partitioning). */
export const createPrePartitionDatabase = (): Promise<ScratchDatabase> =>
  createDatabaseMigratedTo(BEFORE_PARTITIONING);
