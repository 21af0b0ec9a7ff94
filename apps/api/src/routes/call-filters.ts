import type { CallFilters, CallDirection, CallStatus } from '@switchboard/db';
import { invalidParameter } from '../errors';

const DAY_MS = 86_400_000;
const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;

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

/** Validated query → store filters; `date_from` after `date_to` is a 400. */
export function callFilters(query: Record<string, unknown>): CallFilters {
  const filters: CallFilters = {
    direction: query.direction as CallDirection | undefined,
    status: query.status as CallStatus | undefined,
  };
  if (typeof query.date_from === 'string') {
    filters.from = bound('date_from', query.date_from, 'from');
  }
  if (typeof query.date_to === 'string') {
    filters.toExclusive = bound('date_to', query.date_to, 'to');
  }
  if (filters.from && filters.toExclusive && filters.from >= filters.toExclusive) {
    throw invalidParameter('date_from', 'date_from must not be after date_to');
  }
  return filters;
}
