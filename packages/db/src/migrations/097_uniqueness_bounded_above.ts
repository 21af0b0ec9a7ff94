import type { Knex } from 'knex';
import { replaceUniquenessFunction } from '../partitions/uniqueness';

/**
 * The uniqueness triggers of `webhook_deliveries` and `webhook_delivery_attempts` look for a
 * holder up to an hour past `now()` as well as from a day before it
 * (packages/db/src/partitions/uniqueness.ts): each row inserted no longer looks into the
 * seven days made ahead of the clock and the default partition, only yesterday's and
 * today's (replaceUniquenessFunction: only where the partitioning installed them).
 */
export async function up(knex: Knex): Promise<void> {
  await replaceUniquenessFunction(knex, 'webhook_deliveries');
  await replaceUniquenessFunction(knex, 'webhook_delivery_attempts');
}

/** Nothing to undo: the bounded lookups keep every guarantee of the earlier versions. */
export async function down(): Promise<void> {}
