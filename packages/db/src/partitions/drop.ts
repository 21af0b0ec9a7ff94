import type { Knex } from 'knex';
import { partitionRanges, q } from './catalog';
import { archiveName, rangeOfName, type PartitionedTable } from './spec';

/**
 * Drops `t`'s partitions whose whole range ends at or before `cutoff`, oldest first, each in
 * two steps: DETACH (a short lock on the parent, under `lockTimeoutMs`), then DROP of the
 * detached table, which nothing reads any more. A crash between the two leaves a detached
 * table that `finishDetached` drops on the next run. The caller guarantees `cutoff` is at or
 * before the start of the current range, so the current and future partitions are never
 * candidates.
 */
export async function dropBefore(
  knex: Knex,
  t: PartitionedTable,
  cutoff: Date,
  lockTimeoutMs: number,
): Promise<string[]> {
  const dropped: string[] = [];
  for (const p of await partitionRanges(knex, t)) {
    if (p.end.getTime() > cutoff.getTime()) break;
    await knex.transaction(async (trx) => {
      await trx.raw(`SET LOCAL lock_timeout = ${Math.floor(lockTimeoutMs)}`);
      await trx.raw(`ALTER TABLE ${q(t.table)} DETACH PARTITION ${q(p.name)}`);
    });
    await knex.raw(`DROP TABLE IF EXISTS ${q(p.name)}`);
    dropped.push(p.name);
  }
  return dropped;
}

/**
 * Drops what a crashed `dropBefore` detached and did not drop: a plain table named like one
 * of `t`'s partitions whose range ended at or before `cutoff` (or a detached archive, which
 * is only ever detached to be dropped). Anything else is left alone.
 */
export async function finishDetached(
  knex: Knex,
  t: PartitionedTable,
  cutoff: Date,
): Promise<string[]> {
  const { rows } = (await knex.raw(
    `SELECT c.relname AS name FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
      WHERE c.relkind = 'r' AND NOT c.relispartition AND c.relname LIKE ?`,
    [`${t.table}\\_%`],
  )) as { rows: { name: string }[] };
  const finished: string[] = [];
  for (const { name } of rows) {
    const range = rangeOfName(t, name);
    const stale = name === archiveName(t) || (range && range.end.getTime() <= cutoff.getTime());
    if (!stale) continue;
    await knex.raw(`DROP TABLE IF EXISTS ${q(name)}`);
    finished.push(name);
  }
  return finished;
}
