import type { Knex } from 'knex';
import { replaceUniquenessFunction } from '../partitions/uniqueness';

/**
 * The uniqueness trigger of `webhook_deliveries` without its advisory lock per row
 * (packages/db/src/partitions/uniqueness.ts says why the lock is not needed): a fan-out
 * held one per delivery to its commit, enough at a few thousand to fill the server's
 * shared lock table. Only the function is replaced (the trigger calls it by name), and
 * only where the partitioning (020) installed it; a database converted later gets this
 * version from the conversion itself.
 */
export async function up(knex: Knex): Promise<void> {
  await replaceUniquenessFunction(knex, 'webhook_deliveries');
}

/** Nothing to undo: the trigger without the lock keeps every guarantee of earlier versions. */
export async function down(): Promise<void> {}
