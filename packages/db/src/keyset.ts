import type { Knex } from 'knex';

/** A position in a list ordered by (time DESC, id DESC): the last row of the previous page. */
export interface KeysetPosition {
  /** Milliseconds since the epoch (the column is timestamptz(3), so this is exact). */
  t: number;
  id: string;
}

export interface KeysetPage<Row> {
  rows: Row[];
  /** Position of the last row returned when more rows follow, else null. */
  next: KeysetPosition | null;
}

/**
 * The one keyset pagination helper used by every list. Orders by (timeColumn DESC, idColumn
 * DESC) and continues strictly after `after` with a row comparison, which an index on
 * (…, time DESC, id DESC) serves without sorting at any depth. Ties on time are broken by
 * id, so rows inserted during a walk are never skipped or repeated.
 */
export async function keysetPage<Row extends object>(
  query: Knex.QueryBuilder,
  opts: {
    timeColumn: string;
    idColumn: string;
    after?: KeysetPosition | null;
    limit: number;
    position: (row: Row) => KeysetPosition;
  },
): Promise<KeysetPage<Row>> {
  if (opts.after) {
    query.whereRaw(`(??, ??) < (?, ?)`, [
      opts.timeColumn,
      opts.idColumn,
      new Date(opts.after.t),
      opts.after.id,
    ]);
  }
  const rows = (await query
    .orderBy([
      { column: opts.timeColumn, order: 'desc' },
      { column: opts.idColumn, order: 'desc' },
    ])
    .limit(opts.limit + 1)) as Row[];
  const hasMore = rows.length > opts.limit;
  if (hasMore) rows.length = opts.limit;
  const last = rows[rows.length - 1];
  return { rows, next: hasMore && last ? opts.position(last) : null };
}

/** What a store's list takes: the page size, and the last row of the previous page. */
export interface PageRequest {
  limit: number;
  after?: KeysetPosition | null;
}

/** The keys of a row whose value is a time. */
type TimeKey<Row> = { [K in keyof Row]: Row[K] extends Date ? K : never }[keyof Row] & string;

/**
 * The shape of most lists: a page newest first by (`time`, id) of one table, each row mapped
 * to what the store returns. `alias` is the table's name in a query with joins (`c` reads
 * `c.started_at`, `c.id`); a row's position is its own time and id.
 */
export async function newestFirst<Row extends { id: string }, T>(
  query: Knex.QueryBuilder,
  page: PageRequest,
  toItem: (row: Row) => T,
  order: { time: TimeKey<Row>; alias?: string },
): Promise<KeysetPage<T>> {
  const prefix = order.alias ? `${order.alias}.` : '';
  const result = await keysetPage<Row>(query, {
    timeColumn: `${prefix}${order.time}`,
    idColumn: `${prefix}id`,
    ...page,
    position: (r) => ({ t: (r[order.time] as Date).getTime(), id: r.id }),
  });
  return { rows: result.rows.map(toItem), next: result.next };
}

/**
 * Orders positions as Postgres orders `(time, id)` ascending: ids of one format (a prefix and
 * lowercase hex) compare alike in JavaScript and in any collation, and '' comes first, so
 * `{ t, id: '' }` is the position before every row of time `t`.
 */
export const compareKeyset = (a: KeysetPosition, b: KeysetPosition): number =>
  a.t - b.t || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
