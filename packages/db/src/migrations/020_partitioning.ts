import type { Knex } from 'knex';
import {
  convertToPartitioned,
  dropCaptureLog,
  PARTITIONED_TABLES,
} from './frozen/020_partitioning';

/**
 * The history tables become range-partitioned (docs/decisions/0056-partitioning-and-uniqueness.md),
 * online: each
 * is copied while the API and the worker keep writing, and only a short final switch blocks
 * its writes (./frozen/020_partitioning/convert.ts: this migration's own code, frozen). Not one
 * transaction: each copy batch and each switch commits on its own, and a crash part-way is
 * resumed by running it again (a finished table is skipped, an unfinished one starts over).
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  // Events first: its switch drops the deliveries' key to it before deliveries are copied.
  for (const t of PARTITIONED_TABLES) {
    const result = await convertToPartitioned(knex, t);
    if (result.rows > 0) {
      process.stderr.write(
        `switchboard: ${t.table} partitioned (${result.rows} rows; writes blocked ${result.blockedMs} ms)\n`,
      );
    }
  }
  await dropCaptureLog(knex);
}

export async function down(): Promise<void> {
  throw new Error('020_partitioning cannot be undone: restore a backup taken before it');
}
