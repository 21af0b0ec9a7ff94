import { invalidParameter } from '../errors';

const DAY_MS = 86_400_000;
const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A validated `date_from` / `date_to` pair as bounds: `from` inclusive, `toExclusive` not. */
export interface DateRange {
  from?: Date;
  toExclusive?: Date;
}

/**
 * A date bound as a millisecond instant. A bare date means the whole UTC day, so as an upper
 * bound it extends to the next midnight; both bounds are inclusive.
 */
function bound(param: string, value: string, end: 'from' | 'to'): Date {
  const bare = BARE_DATE.test(value);
  const ms = Date.parse(bare ? `${value}T00:00:00.000Z` : value);
  // Date.parse rolls 2026-02-30 over into March: the calendar date must survive the trip.
  const day = Date.parse(`${value.slice(0, 10)}T00:00:00.000Z`);
  const realDay =
    !Number.isNaN(day) && new Date(day).toISOString().slice(0, 10) === value.slice(0, 10);
  if (Number.isNaN(ms) || !realDay) throw invalidParameter(param, `${param} is not a valid date`);
  if (end === 'from') return new Date(ms);
  return new Date(bare ? ms + DAY_MS : ms + 1);
}

/**
 * The `date_from` / `date_to` filters of every history list (docs/API.md, Pagination), from a
 * query validated against `historyFilterProperties`; `date_from` after `date_to` is a 400.
 * `names` reads the same pair under other names (`created_from` / `created_to` of events).
 */
export function dateRange(
  query: Record<string, unknown>,
  names: { from: string; to: string } = { from: 'date_from', to: 'date_to' },
): DateRange {
  const range: DateRange = {};
  const from = query[names.from];
  const to = query[names.to];
  if (typeof from === 'string') range.from = bound(names.from, from, 'from');
  if (typeof to === 'string') range.toExclusive = bound(names.to, to, 'to');
  if (range.from && range.toExclusive && range.from >= range.toExclusive) {
    throw invalidParameter(names.from, `${names.from} must not be after ${names.to}`);
  }
  return range;
}
