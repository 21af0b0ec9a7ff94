import type { Knex } from 'knex';
import {
  AHEAD,
  archiveName,
  defaultName,
  floorTo,
  partitionName,
  shift,
  type PartitionedTable,
} from './spec';

// Frozen with migration 020 (./index.ts): the catalog reads and partition DDL it runs.

/** An identifier quoted for SQL (names here come from the spec, never from input). */
export const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const lit = (at: Date): string => `'${at.toISOString()}'`;

/** Whether `table` is a partitioned table (relkind 'p'). */
export async function isPartitioned(db: Knex, table: string): Promise<boolean> {
  const { rows } = (await db.raw(`SELECT relkind FROM pg_class WHERE oid = to_regclass(?)`, [
    table,
  ])) as { rows: { relkind: string }[] };
  return rows[0]?.relkind === 'p';
}

/** The DDL of one range partition of `parent` (named after `t`, whatever `parent` is called). */
function rangePartitionSql(t: PartitionedTable, parent: string, start: Date): string {
  const end = shift(start, t.interval, 1);
  return `CREATE TABLE IF NOT EXISTS ${q(partitionName(t, start))} PARTITION OF ${q(parent)}
          FOR VALUES FROM (${lit(start)}) TO (${lit(end)})`;
}

/**
 * The partitions of a table being created: the archive below `first`, one range per day or
 * month from `first` up to AHEAD beyond `now`, and the default.
 */
export async function createInitialPartitions(
  db: Knex,
  t: PartitionedTable,
  parent: string,
  first: Date,
  now: Date,
): Promise<void> {
  await db.raw(
    `CREATE TABLE ${q(archiveName(t))} PARTITION OF ${q(parent)}
       FOR VALUES FROM (MINVALUE) TO (${lit(first)})`,
  );
  const last = shift(floorTo(now, t.interval), t.interval, AHEAD[t.interval]);
  for (let s = first; s <= last; s = shift(s, t.interval, 1)) {
    await db.raw(rangePartitionSql(t, parent, s));
  }
  await db.raw(`CREATE TABLE ${q(defaultName(t))} PARTITION OF ${q(parent)} DEFAULT`);
}
