import type { Knex } from 'knex';

// Frozen with migration 105 (it alone runs this): a later change to the live partition code
// must not change what an old migration does.

/** An identifier quoted for SQL (names here come from the migration, never from input). */
const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Whether `table` is a partitioned table (relkind 'p'). */
async function isPartitioned(db: Knex, table: string): Promise<boolean> {
  const { rows } = (await db.raw(`SELECT relkind FROM pg_class WHERE oid = to_regclass(?)`, [
    table,
  ])) as { rows: { relkind: string }[] };
  return rows[0]?.relkind === 'p';
}

/** The partitions attached to `table` now, by name. */
async function attachedPartitions(db: Knex, table: string): Promise<string[]> {
  const { rows } = (await db.raw(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass(?) ORDER BY c.relname`,
    [table],
  )) as { rows: { name: string }[] };
  return rows.map((r) => r.name);
}

/** An index of a partitioned table, as one parent index and one per partition. */
export interface PartitionedIndex {
  /** The parent's index name. */
  name: string;
  /** Each partition's index is `<partition>_<suffix>` (names stay under 63 bytes). */
  suffix: string;
  /** `(col, …)`. */
  columns: string;
  /** A partial index's predicate, if any. */
  where?: string;
}

/** Partitions with more rows than this (planner estimate) are indexed concurrently. */
const SMALL_PARTITION_ROWS = 50_000;

async function estimatedRows(knex: Knex, table: string): Promise<number> {
  const { rows } = (await knex.raw(`SELECT reltuples FROM pg_class WHERE oid = to_regclass(?)`, [
    table,
  ])) as { rows: Array<{ reltuples: number }> };
  // -1: never analyzed; counted then, up to the threshold only.
  const estimate = Number(rows[0]?.reltuples ?? 0);
  if (estimate >= 0) return estimate;
  const counted = (await knex.raw(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${q(table)} LIMIT ${SMALL_PARTITION_ROWS + 1}) x`,
  )) as { rows: Array<{ n: number }> };
  return counted.rows[0]?.n ?? 0;
}

/**
 * Creates `ix` on `table` online, as migration 070 does (outside a transaction): on a
 * partitioned table, the parent's index is made on the parent only (invalid, no scan), each
 * partition's is built (CONCURRENTLY unless the partition is small) and attached, and the
 * parent's is valid once every partition's is; partitions made later get it when they are
 * created. Each step commits on its own and is idempotent: a run cut short is finished by
 * running it again. A table that is not partitioned (yet) gets a concurrent build.
 */
export async function createIndexOnline(
  knex: Knex,
  table: string,
  ix: PartitionedIndex,
): Promise<void> {
  const where = ix.where ? ` WHERE ${ix.where}` : '';
  if (!(await isPartitioned(knex, table))) {
    await knex.raw(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${q(ix.name)} ON ${q(table)} ${ix.columns}${where}`,
    );
    return;
  }
  await knex.raw(
    `CREATE INDEX IF NOT EXISTS ${q(ix.name)} ON ONLY ${q(table)} ${ix.columns}${where}`,
  );
  for (const partition of await attachedPartitions(knex, table)) {
    const name = `${partition}_${ix.suffix}`;
    // Done already (an earlier run, or a partition created since, which got it then).
    const attached = await knex.raw(
      `SELECT 1 FROM pg_inherits i JOIN pg_index x ON x.indexrelid = i.inhrelid
        WHERE i.inhparent = to_regclass(?) AND x.indrelid = to_regclass(?)`,
      [ix.name, partition],
    );
    if ((attached as { rows: unknown[] }).rows.length > 0) continue;
    // A build cut short leaves an invalid index: dropped and built again.
    await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${q(name)}`);
    // A small partition (the days ahead, a quiet day) is indexed in milliseconds under a
    // plain build's write lock; a concurrent build would wait out every open transaction.
    const concurrently = (await estimatedRows(knex, partition)) > SMALL_PARTITION_ROWS;
    await knex.raw(
      `CREATE INDEX ${concurrently ? 'CONCURRENTLY' : ''} ${q(name)}
         ON ${q(partition)} ${ix.columns}${where}`,
    );
    await knex.raw(`ALTER INDEX ${q(ix.name)} ATTACH PARTITION ${q(name)}`);
  }
}
