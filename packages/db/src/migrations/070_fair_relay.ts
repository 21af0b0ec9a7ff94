import type { Knex } from 'knex';

/**
 * Fair relay (docs/decisions/0045-tenants-take-turns.md): the relay takes unpublished
 * events from every tenant in turn, and the reconciler looks only at events published but
 * not fanned out. Two partial indexes answer both without reading a tenant's backlog:
 * - `events_unpublished_tenant_idx` (tenant_id, created_at) WHERE published_at IS NULL:
 *   the tenants with unpublished events (a skip scan) and each one's oldest;
 * - `events_published_pending_idx` (published_at) WHERE published, not fanned out.
 *
 * Online: `events` is partitioned, so each index is made on the parent only (invalid, no
 * scan), built on every partition (CONCURRENTLY unless the partition is small) and attached;
 * the parent index is valid once every partition's is. Partitions made later get it when
 * they are attached. Each step commits on its own and is idempotent, so a run cut short is
 * finished by running it again.
 */
export const config = { transaction: false };

const INDEXES = [
  {
    name: 'events_unpublished_tenant_idx',
    suffix: 'unpub_tenant_idx',
    columns: '(tenant_id, created_at)',
    where: 'published_at IS NULL',
  },
  {
    name: 'events_published_pending_idx',
    suffix: 'pub_pending_idx',
    columns: '(published_at)',
    where: 'fanned_out_at IS NULL AND published_at IS NOT NULL',
  },
] as const;

// The catalog reads this migration runs, written out here so that it never changes with
// live code (packages/db/src/partitions has its own).

/** An identifier quoted for SQL (names here are the migration's own, never input). */
const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Whether `table` is a partitioned table (relkind 'p'). */
async function isPartitioned(knex: Knex, table: string): Promise<boolean> {
  const { rows } = (await knex.raw(`SELECT relkind FROM pg_class WHERE oid = to_regclass(?)`, [
    table,
  ])) as { rows: { relkind: string }[] };
  return rows[0]?.relkind === 'p';
}

/** The partitions attached to `table` now, by name. */
async function attachedPartitions(knex: Knex, table: string): Promise<string[]> {
  const { rows } = (await knex.raw(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass(?) ORDER BY c.relname`,
    [table],
  )) as { rows: { name: string }[] };
  return rows.map((r) => r.name);
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

export async function up(knex: Knex): Promise<void> {
  const partitioned = await isPartitioned(knex, 'events');
  for (const ix of INDEXES) {
    if (!partitioned) {
      await knex.raw(
        `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${q(ix.name)} ON events ${ix.columns} WHERE ${ix.where}`,
      );
      continue;
    }
    await knex.raw(
      `CREATE INDEX IF NOT EXISTS ${q(ix.name)} ON ONLY events ${ix.columns} WHERE ${ix.where}`,
    );
    for (const partition of await attachedPartitions(knex, 'events')) {
      // Partition names are at most `events_p20261126`-long: the index name fits 63 bytes.
      const name = `${partition}_${ix.suffix}`;
      // Done already (an earlier run, or a partition attached since, which gets it then).
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
           ON ${q(partition)} ${ix.columns} WHERE ${ix.where}`,
      );
      await knex.raw(`ALTER INDEX ${q(ix.name)} ATTACH PARTITION ${q(name)}`);
    }
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const ix of INDEXES) await knex.raw(`DROP INDEX IF EXISTS ${q(ix.name)}`);
}
