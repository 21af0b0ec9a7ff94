import type { Knex } from 'knex';

/**
 * The precondition of an edit on the version of the row it changes (an If-Match): the
 * versions it accepts, or null for any (no If-Match, or `*`). Checked by the edit's own
 * statement (`WHERE version IN (...)`) or under the row's lock, never read first and written
 * after: of two edits made with the same version, exactly one applies.
 */
export type VersionCondition = readonly number[] | null;

/** The row exists, but its version is not one the edit's condition accepts. */
export class VersionMismatch extends Error {
  constructor(readonly current: number) {
    super(`version ${current} is not the one the edit expected`);
    this.name = 'VersionMismatch';
  }
}

/** Whether `version` satisfies `condition`. */
export const accepts = (condition: VersionCondition, version: number): boolean =>
  condition === null || condition.includes(version);

/** Throws VersionMismatch when the condition refuses the version (a locked row's, say). */
export function requireVersion(condition: VersionCondition, version: number): void {
  if (!accepts(condition, version)) throw new VersionMismatch(version);
}

/** Restricts an edit statement to the versions the condition accepts. */
export function whereVersion<Q extends Knex.QueryBuilder>(
  query: Q,
  condition: VersionCondition,
): Q {
  return condition === null ? query : (query.whereIn('version', [...condition]) as Q);
}

/**
 * After an edit restricted by its row's key and `condition` only changed no row: throws
 * VersionMismatch (with the version it found) when the row exists, since only the version
 * can have kept the edit from it; returns when there is no such row (a 404).
 */
export async function explainMiss(
  db: Knex,
  table: string,
  where: Record<string, string>,
  condition: VersionCondition,
): Promise<void> {
  if (condition === null) return;
  const row = (await db(table).select('version').where(where).first()) as
    { version: number } | undefined;
  if (row) throw new VersionMismatch(row.version);
}
