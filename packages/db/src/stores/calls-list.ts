import type { Knex } from 'knex';
import type { KeysetPage, PageRequest } from '../keyset';
import { runPrepared } from '../prepared';
import type { CallFilters, CallSummary } from './call-types';
import { toSummary, type SummaryRow } from './calls-rows';

/** The filters a list statement may have, in the order of its parameters. */
const OPTIONAL = [
  ['livemode', 'c.livemode = $?'],
  ['receptionistId', 'c.receptionist_id = $?'],
  ['direction', 'c.direction = $?'],
  ['status', 'c.status = $?'],
  ['from', 'c.started_at >= $?'],
  ['toExclusive', 'c.started_at < $?'],
] as const;

/** List columns only: the heavy JSON payloads stay in the table, two flags say they exist. */
const COLUMNS = `c.id, c.tenant_id, c.receptionist_id, c.direction, c.status, c.from_number,
  c.to_number, c.customer_name, c.duration_seconds, c.outcome, c.started_at, c.ended_at,
  c.booking, c.livemode, r.name AS receptionist_name, (c.transcript IS NOT NULL) AS has_transcript,
  (c.recording IS NOT NULL) AS has_recording`;

interface Statement {
  name: string;
  text: string;
}

/** One statement per combination of filters and cursor (at most 128), built on first use. */
const statements = new Map<number, Statement>();

function statementFor(mask: number): Statement {
  let s = statements.get(mask);
  if (s) return s;
  let n = 1;
  const where = ['c.tenant_id = $1'];
  OPTIONAL.forEach(([, clause], i) => {
    if (mask & (1 << i)) where.push(clause.replace('$?', `$${++n}`));
  });
  if (mask & (1 << OPTIONAL.length)) where.push(`(c.started_at, c.id) < ($${++n}, $${++n})`);
  s = {
    name: `sb_calls_list_${mask}`,
    text: `SELECT ${COLUMNS}
      FROM calls c JOIN receptionists r ON r.id = c.receptionist_id
     WHERE ${where.join(' AND ')}
     ORDER BY c.started_at DESC, c.id DESC
     LIMIT $${++n}`,
  };
  statements.set(mask, s);
  return s;
}

/** The statement and values of one page (`listCalls` runs it; a benchmark EXPLAINs it). */
export function listCallsStatement(
  tenantId: string,
  filters: CallFilters,
  page: PageRequest,
): Statement & { values: unknown[] } {
  let mask = 0;
  const values: unknown[] = [tenantId];
  OPTIONAL.forEach(([field], i) => {
    const value = filters[field];
    if (value === undefined) return;
    mask |= 1 << i;
    values.push(value);
  });
  if (page.after) {
    mask |= 1 << OPTIONAL.length;
    values.push(new Date(page.after.t), page.after.id);
  }
  values.push(page.limit + 1);
  return { ...statementFor(mask), values };
}

/**
 * One page of a tenant's calls, newest first by (started_at, id), the keyset rule of
 * `keysetPage` written as a named prepared statement: Postgres parses it once per
 * connection, and the request builds no query. Same rows, order and next position as the
 * list built with knex (`test/api/calls-list.test.ts`). With a receptionist filter the
 * planner walks the per-receptionist index; otherwise the per-tenant one.
 */
export async function listCalls(
  db: Knex,
  tenantId: string,
  filters: CallFilters,
  page: PageRequest,
): Promise<KeysetPage<CallSummary>> {
  const { name, text, values } = listCallsStatement(tenantId, filters, page);
  const rows = await runPrepared<SummaryRow>(db, name, text, values);
  const hasMore = rows.length > page.limit;
  if (hasMore) rows.length = page.limit;
  const last = rows[rows.length - 1];
  return {
    rows: rows.map(toSummary),
    next: hasMore && last ? { t: last.started_at.getTime(), id: last.id } : null,
  };
}
