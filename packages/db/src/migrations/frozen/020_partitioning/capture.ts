import type { Knex } from 'knex';
import { q } from './catalog';

// Frozen with migration 020 (./index.ts).

/**
 * Change capture while a table is copied: a row trigger on the old table logs the id of
 * every row inserted, updated or deleted, and `applyLogged` makes the twin's row match the
 * old table's again (deleted, then copied if it still exists). Logging starts before the
 * copy, so a row written at any moment is either copied by the bulk pass or logged.
 */
const LOG = 'partition_migration_log';

export async function installCapture(knex: Knex, table: string): Promise<void> {
  await knex.raw(`CREATE TABLE IF NOT EXISTS ${LOG} (
    seq bigserial PRIMARY KEY, tbl text NOT NULL, id text NOT NULL)`);
  await knex.raw(`CREATE OR REPLACE FUNCTION partition_migration_capture() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        INSERT INTO ${LOG} (tbl, id) VALUES (TG_TABLE_NAME, OLD.id::text);
      ELSE
        INSERT INTO ${LOG} (tbl, id) VALUES (TG_TABLE_NAME, NEW.id::text);
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`DELETE FROM ${LOG} WHERE tbl = ?`, [table]);
  await knex.raw(`DROP TRIGGER IF EXISTS partition_capture ON ${q(table)}`);
  await knex.raw(`CREATE TRIGGER partition_capture AFTER INSERT OR UPDATE OR DELETE
    ON ${q(table)} FOR EACH ROW EXECUTE FUNCTION partition_migration_capture()`);
}

export async function removeCapture(db: Knex, table: string): Promise<void> {
  await db.raw(`DROP TRIGGER IF EXISTS partition_capture ON ${q(table)}`);
  await db.raw(`DELETE FROM ${LOG} WHERE tbl = ?`, [table]);
}

/** Drops the log and its function once no table is being converted. */
export async function dropCaptureLog(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${LOG}`);
  await knex.raw(`DROP FUNCTION IF EXISTS partition_migration_capture()`);
}

/**
 * Re-copies the rows logged for `table`, `batch` log entries per transaction, until the log
 * is empty; returns how many entries were applied. Inside a caller's transaction that holds
 * the table against writes, the log cannot grow, so this ends.
 */
export async function applyLogged(
  db: Knex,
  table: string,
  twin: string,
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await (db.isTransaction ? applyBatch(db) : db.transaction(applyBatch));
    total += n;
    if (n === 0 || n < Math.min(batch, 10_000)) return total;
  }

  async function applyBatch(trx: Knex): Promise<number> {
    const type = await idType(trx, table);
    const { rows } = (await trx.raw(
      `WITH taken AS (
         DELETE FROM ${LOG} WHERE seq IN (
           SELECT seq FROM ${LOG} WHERE tbl = ? ORDER BY seq LIMIT ${Math.min(batch, 10_000)})
         RETURNING id),
       ids AS (SELECT DISTINCT id FROM taken),
       gone AS (DELETE FROM ${q(twin)} w USING ids WHERE w.id = ids.id::${type} RETURNING 1)
       SELECT (SELECT count(*) FROM taken)::int AS n, array_agg(id) AS ids,
              (SELECT count(*) FROM gone)::int AS gone
         FROM ids`,
      [table],
    )) as { rows: { n: number; ids: string[] | null }[] };
    const ids = rows[0]?.ids ?? [];
    if (ids.length) {
      await trx.raw(
        `INSERT INTO ${q(twin)} SELECT * FROM ${q(table)} t
          WHERE t.id = ANY (?::${type}[])`,
        [ids],
      );
    }
    return rows[0]?.n ?? 0;
  }
}

async function idType(db: Knex, table: string): Promise<string> {
  const { rows } = (await db.raw(
    `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
      WHERE attrelid = to_regclass(?) AND attname = 'id'`,
    [table],
  )) as { rows: { type: string }[] };
  const type = rows[0]?.type;
  if (type !== 'text' && type !== 'bigint' && type !== 'uuid') throw new Error(`id of ${table}?`);
  return type;
}
