import type { Knex } from 'knex';
import { applyLogged, installCapture, removeCapture } from './capture';
import { createInitialPartitions, isPartitioned, q } from './catalog';
import { copyIndexes, copyForeignKeys, dropReferencingKeys, moveSequences } from './ddl-copy';
import { floorTo, shift, type PartitionedTable } from './spec';
import { uniquenessSql } from './uniqueness';

// Frozen with migration 020 (./index.ts).

export interface ConvertOptions {
  /** Rows per copy transaction. */
  batchRows?: number;
  /** The clock the first ranges are made around (tests set it). */
  now?: Date;
  /** Called with what the conversion is doing (the migration logs it). */
  log?: (line: string) => void;
  /** Called after the bulk copy, before the switch (tests write through the old table here). */
  beforeSwitch?: () => Promise<void>;
}

export interface ConvertResult {
  table: string;
  rows: number;
  /** How long writes to the table were blocked: the final switch, lock wait included. */
  blockedMs: number;
}

/** How far back a populated table gets ranges; older rows go to the archive partition. */
const HISTORY: Record<PartitionedTable['interval'], number> = { day: 92, month: 120 };
const SWITCH_ATTEMPTS = 20;

/**
 * Moves `t.table` onto a range-partitioned table of the same columns while the application
 * keeps writing to it (docs/decisions/0056-partitioning-and-uniqueness.md):
 * 1. a trigger on the old table logs the id of every row written from now on;
 * 2. the partitioned twin is made (the old table's columns, defaults and checks, read from the
 *    catalog, so columns added by any earlier migration come along) with its foreign keys;
 * 3. rows are copied in short batches, then the twin gets the old table's indexes;
 * 4. logged rows are re-copied (rounds without a lock, until few are left);
 * 5. one short transaction locks the old table against writes (reads go on), re-copies the
 *    last logged rows, swaps the names and installs the uniqueness trigger
 *    (./uniqueness.ts). Only this step blocks writes.
 * Re-running after a crash starts over from a fresh twin; a finished table is skipped.
 */
export async function convertToPartitioned(
  knex: Knex,
  t: PartitionedTable,
  opts: ConvertOptions = {},
): Promise<ConvertResult> {
  const log = opts.log ?? (() => undefined);
  if (await isPartitioned(knex, t.table)) return { table: t.table, rows: 0, blockedMs: 0 };
  const twin = `${t.table}_partitioned`;
  await knex.raw(`DROP TABLE IF EXISTS ${q(twin)} CASCADE`);
  await installCapture(knex, t.table);

  await knex.raw(
    `CREATE TABLE ${q(twin)} (LIKE ${q(t.table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS
       INCLUDING GENERATED INCLUDING IDENTITY INCLUDING STORAGE INCLUDING COMMENTS)
       PARTITION BY RANGE (${q(t.key)})`,
  );
  const now = opts.now ?? new Date();
  const oldest = (await knex.raw(`SELECT min(${q(t.key)}) AS at FROM ${q(t.table)}`)) as {
    rows: { at: Date | null }[];
  };
  const floorNow = floorTo(now, t.interval);
  const horizon = shift(floorNow, t.interval, -HISTORY[t.interval]);
  const at = oldest.rows[0]?.at;
  const first = at && floorTo(at, t.interval) > horizon ? floorTo(at, t.interval) : horizon;
  await createInitialPartitions(knex, t, twin, at ? first : floorNow, now);
  await copyForeignKeys(knex, t.table, twin);

  const rows = await bulkCopy(knex, t.table, twin, opts.batchRows ?? 20_000);
  log(`${t.table}: ${rows} rows copied`);
  const renames = await copyIndexes(knex, t, twin);
  for (let round = 0; round < 10; round++) {
    const moved = await applyLogged(knex, t.table, twin, 5_000);
    if (moved < 1_000) break;
  }
  await opts.beforeSwitch?.();
  const blockedMs = await switchTables(knex, t, twin, renames);
  log(`${t.table}: switched, writes blocked ${blockedMs} ms`);
  return { table: t.table, rows, blockedMs };
}

/** Copies every row, in id order, one short transaction per batch. */
async function bulkCopy(knex: Knex, table: string, twin: string, batch: number): Promise<number> {
  let last: string | null = null;
  let total = 0;
  for (;;) {
    const { rows } = (await knex.raw(
      `WITH b AS (SELECT * FROM ${q(table)} ${last === null ? '' : 'WHERE id > ?'}
                   ORDER BY id LIMIT ${batch}),
            ins AS (INSERT INTO ${q(twin)} SELECT * FROM b)
       SELECT count(*)::int AS n, max(id)::text AS last FROM b`,
      last === null ? [] : [last],
    )) as { rows: { n: number; last: string | null }[] };
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < batch || !rows[0]?.last) return total;
    last = rows[0].last;
  }
}

/**
 * The switch: writes to the old table wait on SHARE ROW EXCLUSIVE (reads do not) while the
 * last logged rows are re-copied and the names swapped. A lock not granted within the
 * timeout (a long transaction holds the table) is retried, so the application's statements
 * never queue behind the migration for long.
 */
async function switchTables(
  knex: Knex,
  t: PartitionedTable,
  twin: string,
  renames: [string, string][],
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await knex.transaction(async (trx) => {
        await trx.raw(`SET LOCAL lock_timeout = '2s'`);
        const started = Date.now();
        await trx.raw(`LOCK TABLE ${q(t.table)} IN SHARE ROW EXCLUSIVE MODE`);
        await applyLogged(trx, t.table, twin, Number.MAX_SAFE_INTEGER);
        await removeCapture(trx, t.table);
        await dropReferencingKeys(trx, t.table);
        await moveSequences(trx, t.table, twin);
        await trx.raw(`DROP TABLE ${q(t.table)}`);
        await trx.raw(`ALTER TABLE ${q(twin)} RENAME TO ${q(t.table)}`);
        for (const [from, to] of renames) {
          await trx.raw(`ALTER INDEX ${q(from)} RENAME TO ${q(to)}`);
        }
        // Uniqueness across partitions holds from the first write to the new table on.
        for (const sql of uniquenessSql(t.table)) await trx.raw(sql);
        return Date.now() - started;
      });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt >= SWITCH_ATTEMPTS || (code !== '55P03' && code !== '40P01')) throw err;
    }
  }
}
