import { Client } from 'pg';
import type { Knex } from '@switchboard/db';

/** A statement as the code sent it to Postgres ($1, $2, ... and their values). */
export interface Statement {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * The statements `fn` sends to Postgres, in order: every query of a pg client (knex's and
 * the prepared statements run on its connections), with their values.
 */
export async function captureStatements(fn: () => Promise<unknown>): Promise<Statement[]> {
  const seen: Statement[] = [];
  const proto = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const [first, second] = args;
    if (typeof first === 'string') {
      seen.push({ sql: first, bindings: Array.isArray(second) ? second : [] });
    } else if (first && typeof first === 'object' && 'text' in first) {
      const q = first as { text: string; values?: unknown[] };
      seen.push({ sql: q.text, bindings: q.values ?? (Array.isArray(second) ? second : []) });
    }
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return seen;
}

/** One scan of a table in a plan. */
export interface ScanNode {
  relation: string;
  /** Times the node ran (EXPLAIN ANALYZE); 0: pruned while running. */
  loops: number | null;
}

export interface Plan {
  /** Every node type in the plan ("Append", "Merge Append", "Index Scan", ...). */
  nodeTypes: string[];
  scans: ScanNode[];
  /** Shared buffers hit and read by the whole statement (EXPLAIN ANALYZE, BUFFERS). */
  buffers: number | null;
}

/**
 * The plan of a statement with these bindings (planned as the code's statement is: an
 * unnamed statement, with its parameter values). With `analyze` the statement runs, inside
 * a transaction rolled back afterwards, and each scan says how often it ran.
 */
export async function planOf(knex: Knex, s: Statement, analyze: boolean): Promise<Plan> {
  const options = analyze ? 'ANALYZE, BUFFERS, FORMAT JSON' : 'FORMAT JSON';
  // The statement as sent ($1, $2, ... and their values), on one connection of the pool.
  const client = (knex as unknown as { client: PoolClient }).client;
  const connection = await client.acquireConnection();
  let plan: unknown;
  try {
    await connection.query('BEGIN');
    const { rows } = (await connection.query(`EXPLAIN (${options}) ${s.sql}`, s.bindings)) as {
      rows: Array<{ 'QUERY PLAN': Array<{ Plan: unknown }> }>;
    };
    plan = rows[0]!['QUERY PLAN'][0]!.Plan;
  } finally {
    await connection.query('ROLLBACK');
    await client.releaseConnection(connection);
  }
  const nodeTypes: string[] = [];
  const scans: ScanNode[] = [];
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (typeof n['Node Type'] === 'string') nodeTypes.push(n['Node Type']);
    if (typeof n['Relation Name'] === 'string') {
      const loops = n['Actual Loops'];
      scans.push({ relation: n['Relation Name'], loops: typeof loops === 'number' ? loops : null });
    }
    for (const v of Object.values(n)) {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') walk(v);
    }
  };
  walk(plan);
  const top = plan as Record<string, unknown>;
  const hit = top['Shared Hit Blocks'];
  const read = top['Shared Read Blocks'];
  const buffers = typeof hit === 'number' && typeof read === 'number' ? hit + read : null;
  return { nodeTypes, scans, buffers };
}

interface PoolClient {
  acquireConnection(): Promise<Connection>;
  releaseConnection(connection: unknown): Promise<void>;
}

/** One pooled connection's query (a session of its own: settings, prepared statements). */
export interface Connection {
  query(text: string, values?: readonly unknown[]): Promise<{ rows: unknown[] }>;
}

/** Runs `fn` on one connection of `knex`'s pool, given back after. */
export async function onOneConnection<T>(
  knex: Knex,
  fn: (connection: Connection) => Promise<T>,
): Promise<T> {
  const client = (knex as unknown as { client: PoolClient }).client;
  const connection = await client.acquireConnection();
  try {
    return await fn(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}

/** Every value of `field` (a relation's or an index's name) in an `EXPLAIN (FORMAT JSON)` tree. */
export function namesIn(explain: unknown, field: 'Relation Name' | 'Index Name'): string[] {
  const names: string[] = [];
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (typeof n[field] === 'string') names.push(n[field]);
    for (const v of Object.values(n)) {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') walk(v);
    }
  };
  walk(explain);
  return names;
}

/** The partitions of `table` a plan reads: every one listed, or with `ran` those that ran. */
export function partitionsOf(plan: Plan, table: string, ran = false): string[] {
  const names = plan.scans
    .filter((s) => s.relation.startsWith(`${table}_`) && (!ran || (s.loops ?? 1) > 0))
    .map((s) => s.relation);
  return [...new Set(names)].sort();
}

/**
 * Gives a fresh database's daily `table` a range partition for each of the `days` days before
 * its first (a test database has the days from its template's day on only): its empty
 * archive is detached, the days made, and the archive attached again below them.
 */
export async function addPastDays(knex: Knex, table: string, days: number): Promise<string[]> {
  const { rows } = (await knex.raw(
    `SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]
              ::timestamptz AS "end"
       FROM pg_class c WHERE c.relname = ?`,
    [`${table}_archive`],
  )) as { rows: Array<{ end: Date }> };
  const first = rows[0]!.end; // the archive ends where the first day begins
  const day = (n: number) => new Date(first.getTime() - n * 86_400_000);
  const name = (d: Date) => `${table}_p${d.toISOString().slice(0, 10).replace(/-/g, '')}`;
  const made: string[] = [];
  await knex.transaction(async (trx) => {
    await trx.raw(`ALTER TABLE ${table} DETACH PARTITION ${table}_archive`);
    for (let n = days; n >= 1; n--) {
      await trx.raw(
        `CREATE TABLE ${name(day(n))} PARTITION OF ${table}
           FOR VALUES FROM ('${day(n).toISOString()}') TO ('${day(n - 1).toISOString()}')`,
      );
      made.push(name(day(n)));
    }
    await trx.raw(
      `ALTER TABLE ${table} ATTACH PARTITION ${table}_archive
         FOR VALUES FROM (MINVALUE) TO ('${day(days).toISOString()}')`,
    );
  });
  return made;
}

/** Today's partition of a daily table. */
export const todayOf = (table: string): string => dayPartitionAt(table, new Date());

/**
 * The oldest day a pending floor swept now may name when nothing is pending: an hour ago's
 * (packages/db/src/partitions/pending-floors.ts), yesterday's in the first hour of a day.
 */
export const emptyFloorDayOf = (table: string): string =>
  dayPartitionAt(table, new Date(Date.now() - 3_600_000));

const dayPartitionAt = (table: string, at: Date): string =>
  `${table}_p${at.toISOString().slice(0, 10).replace(/-/g, '')}`;
