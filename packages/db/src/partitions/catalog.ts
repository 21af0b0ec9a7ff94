import type { Knex } from 'knex';
import { AHEAD, defaultName, floorTo, partitionName, shift, type PartitionedTable } from './spec';

/** An identifier quoted for SQL (names here come from the spec, never from input). */
export const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const lit = (at: Date): string => `'${at.toISOString()}'`;

/** The partitions attached to `table` now, by name. */
export async function attachedPartitions(db: Knex, table: string): Promise<string[]> {
  const { rows } = (await db.raw(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass(?) ORDER BY c.relname`,
    [table],
  )) as { rows: { name: string }[] };
  return rows.map((r) => r.name);
}

/**
 * Makes the ranges from the current one up to AHEAD beyond `now` that are missing. A row
 * that already sits in the default partition for a new range (dated ahead of the ranges
 * made so far) is moved into it in the same transaction, so the attach never fails on it.
 * Returns the partitions made. Each runs under `lockTimeoutMs`: a busy table is retried on
 * the next run instead of queueing the application's statements behind the DDL.
 */
export async function ensureAhead(
  db: Knex,
  t: PartitionedTable,
  now: Date,
  lockTimeoutMs: number,
): Promise<string[]> {
  const have = new Set(await attachedPartitions(db, t.table));
  const made: string[] = [];
  const current = floorTo(now, t.interval);
  for (let i = 0; i <= AHEAD[t.interval]; i++) {
    const start = shift(current, t.interval, i);
    const name = partitionName(t, start);
    if (have.has(name)) continue;
    const end = shift(start, t.interval, 1);
    await db.transaction(async (trx) => {
      await trx.raw(`SET LOCAL lock_timeout = ${Math.floor(lockTimeoutMs)}`);
      await trx.raw(`CREATE TABLE IF NOT EXISTS ${q(name)} (LIKE ${q(t.table)})`);
      await trx.raw(
        `WITH moved AS (DELETE FROM ${q(defaultName(t))}
                         WHERE ${q(t.key)} >= ? AND ${q(t.key)} < ? RETURNING *)
         INSERT INTO ${q(name)} SELECT * FROM moved`,
        [start, end],
      );
      await trx.raw(
        `ALTER TABLE ${q(t.table)} ATTACH PARTITION ${q(name)}
           FOR VALUES FROM (${lit(start)}) TO (${lit(end)})`,
      );
    });
    made.push(name);
  }
  return made;
}

/**
 * The attached range partitions of `t` (the archive included, start null), oldest first;
 * bounds are read from the catalog, so a range made by hand is seen too.
 */
export async function partitionRanges(
  db: Knex,
  t: PartitionedTable,
): Promise<{ name: string; start: Date | null; end: Date }[]> {
  const { rows } = (await db.raw(
    `SELECT name, CASE WHEN (m)[1] = 'MINVALUE' THEN NULL
                       ELSE btrim((m)[1], chr(39))::timestamptz END AS start,
            (m)[2]::timestamptz AS "end"
       FROM (SELECT c.relname AS name,
                    regexp_match(pg_get_expr(c.relpartbound, c.oid),
                                 'FROM \\(([^)]+)\\) TO \\(''([^'']+)''\\)') AS m
               FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = to_regclass(?)) p
      WHERE m IS NOT NULL
      ORDER BY 3`,
    [t.table],
  )) as { rows: { name: string; start: Date | null; end: Date }[] };
  return rows;
}

/**
 * The span of `t`'s partition key that its range partitions cover without a gap, ending at
 * the end of the last range: `start` null when it reaches down to the archive (MINVALUE).
 * Null when `t` has no range partition. A read bounded to this span never includes the
 * default partition (which may hold any date outside the ranges, so Postgres cannot read it
 * in key order): Postgres then reads the ranges one after another in key order and stops
 * as soon as a LIMIT is met (an ordered Append), instead of merging every range.
 */
export async function contiguousSpan(
  db: Knex,
  t: PartitionedTable,
): Promise<{ start: Date | null; end: Date } | null> {
  const ranges = await partitionRanges(db, t);
  const last = ranges[ranges.length - 1];
  if (!last) return null;
  let start = last.start;
  for (let i = ranges.length - 2; i >= 0 && start !== null; i--) {
    const r = ranges[i]!;
    if (r.end.getTime() !== start.getTime()) break;
    start = r.start;
  }
  return { start, end: last.end };
}
