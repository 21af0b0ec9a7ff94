import type { Knex } from 'knex';
import { migrationSource } from './migrations';

/** Applies every pending migration; returns the names applied by this call. */
export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}
