import type { Knex } from 'knex';

/** `now() - ms` by the database's clock, which every row's times were written with. */
export const ago = (db: Knex, ms: number): Knex.Raw =>
  db.raw('now() - make_interval(secs => ?)', [ms / 1000]);

/**
 * The ids of the rows of `query` whose `column` is more than `ms` ago, oldest first, at most
 * `limit`: what a reconciler's scan for work whose job may be lost reads.
 */
export async function idsOlderThan(
  db: Knex,
  query: Knex.QueryBuilder,
  column: string,
  ms: number,
  limit: number,
): Promise<string[]> {
  const rows = (await query
    .select('id')
    .andWhere(column, '<', ago(db, ms))
    .orderBy(column)
    .limit(limit)) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}
