import type { Knex } from 'knex';
import { uniquenessSql } from '../partitions/uniqueness';

/**
 * The uniqueness triggers of `webhook_deliveries` and `webhook_delivery_attempts` look for a
 * holder up to an hour past `now()` as well as from a day before it
 * (packages/db/src/partitions/uniqueness.ts): each row inserted no longer looks into the
 * seven days made ahead of the clock and the default partition, only yesterday's and
 * today's. Only the functions are replaced (the triggers call them by name), and only where
 * the partitioning (020) installed them; a database converted later gets this version from
 * the conversion itself.
 */
export async function up(knex: Knex): Promise<void> {
  for (const table of ['webhook_deliveries', 'webhook_delivery_attempts']) {
    const { rows } = (await knex.raw(`SELECT 1 FROM pg_proc WHERE proname = ?`, [
      `${table}_unique_keys`,
    ])) as { rows: unknown[] };
    if (rows.length === 0) continue;
    const [replaceFunction] = uniquenessSql(table);
    if (replaceFunction) await knex.raw(replaceFunction);
  }
}

/** Nothing to undo: the bounded lookups keep every guarantee of the earlier versions. */
export async function down(): Promise<void> {}
