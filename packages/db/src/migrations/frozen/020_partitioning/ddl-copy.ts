import type { Knex } from 'knex';
import { q } from './catalog';
import { PARTITIONED_TABLES, type PartitionedTable } from './spec';
import { TRIGGER_ENFORCED } from './uniqueness';

// Frozen with migration 020 (./index.ts).

interface IndexRow {
  name: string;
  def: string;
  primary: boolean;
  unique: boolean;
  cols: string[];
}

/** An index's name while both tables exist (index names are unique per schema). */
const tempName = (name: string): string => `${name.slice(0, 58)}_pt`;

/**
 * Gives the twin the old table's indexes, read from the catalog (so indexes added by any
 * migration come along), under temporary names; returns the renames to apply once the old
 * table is gone. Postgres requires a unique index of a partitioned table to contain the
 * partition key: the primary key becomes (id, key), ids staying unique by construction
 * (random 128-bit ids, or a sequence); the unique indexes that the uniqueness triggers
 * enforce across partitions become plain indexes (they serve the triggers' lookups); any
 * other unique index gets the key appended.
 */
export async function copyIndexes(
  knex: Knex,
  t: PartitionedTable,
  twin: string,
): Promise<[string, string][]> {
  const { rows } = (await knex.raw(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS def, x.indisprimary AS primary,
            x.indisunique AS unique,
            ARRAY(SELECT a.attname::text FROM unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
                   ORDER BY k.ord) AS cols
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
      WHERE x.indrelid = to_regclass(?) ORDER BY i.relname`,
    [t.table],
  )) as { rows: IndexRow[] };
  const renames: [string, string][] = [];
  for (const ix of rows) {
    const temp = tempName(ix.name);
    renames.push([temp, ix.name]);
    if (ix.primary) {
      const cols = ix.cols.includes(t.key) ? ix.cols : [...ix.cols, t.key];
      await knex.raw(
        `ALTER TABLE ${q(twin)} ADD CONSTRAINT ${q(temp)} PRIMARY KEY (${cols.map(q).join(', ')})`,
      );
      continue;
    }
    const m = /^CREATE (UNIQUE )?INDEX \S+ ON \S+ (USING \w+ \()(.*)$/.exec(ix.def);
    if (!m) throw new Error(`cannot copy index ${ix.name}: ${ix.def}`);
    let unique = ix.unique;
    let rest = m[3] ?? '';
    if (unique && TRIGGER_ENFORCED.includes(ix.name)) unique = false;
    else if (unique && !ix.cols.includes(t.key)) rest = rest.replace(/\)/, `, ${q(t.key)})`);
    await knex.raw(
      `CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${q(temp)} ON ${q(twin)} ${m[2] ?? ''}${rest}`,
    );
  }
  return renames;
}

/**
 * Gives the twin the old table's foreign keys to ordinary tables (tenants, receptionists,
 * subscriptions…), made while it is empty so that no validation scan ever locks the
 * referenced tables. Keys to another partitioned table (a delivery's event, an attempt's
 * delivery) cannot exist without the key column; those rows are removed by retention.
 */
export async function copyForeignKeys(knex: Knex, table: string, twin: string): Promise<void> {
  const { rows } = (await knex.raw(
    `SELECT c.conname AS name, pg_get_constraintdef(c.oid) AS def, r.relname AS target,
            r.relkind AS kind
       FROM pg_constraint c JOIN pg_class r ON r.oid = c.confrelid
      WHERE c.conrelid = to_regclass(?) AND c.contype = 'f'`,
    [table],
  )) as { rows: { name: string; def: string; target: string; kind: string }[] };
  const partitioned = new Set(PARTITIONED_TABLES.map((p) => p.table));
  for (const fk of rows) {
    if (fk.kind === 'p' || partitioned.has(fk.target)) continue;
    await knex.raw(`ALTER TABLE ${q(twin)} ADD CONSTRAINT ${q(fk.name)} ${fk.def}`);
  }
}

/** Drops the foreign keys of other tables that point at `table` (see copyForeignKeys). */
export async function dropReferencingKeys(db: Knex, table: string): Promise<void> {
  const { rows } = (await db.raw(
    `SELECT conrelid::regclass::text AS tbl, conname AS name FROM pg_constraint
      WHERE confrelid = to_regclass(?) AND contype = 'f' AND conrelid <> confrelid`,
    [table],
  )) as { rows: { tbl: string; name: string }[] };
  for (const fk of rows) await db.raw(`ALTER TABLE ${fk.tbl} DROP CONSTRAINT ${q(fk.name)}`);
}

/** Sequences owned by the old table's columns (bigserial ids) move to the twin's columns. */
export async function moveSequences(db: Knex, table: string, twin: string): Promise<void> {
  const { rows } = (await db.raw(
    `SELECT s.oid::regclass::text AS seq, a.attname AS col
       FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
       JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
      WHERE d.refobjid = to_regclass(?) AND d.deptype = 'a'`,
    [table],
  )) as { rows: { seq: string; col: string }[] };
  for (const r of rows) {
    await db.raw(`ALTER SEQUENCE ${r.seq} OWNED BY ${q(twin)}.${q(r.col)}`);
  }
}
