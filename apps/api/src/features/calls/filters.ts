import type { CallFilters, CallDirection, CallStatus } from '@switchboard/db';
import { dateRange } from '../../pagination/date-range';

/** Validated query → store filters (the date range as every history list parses it). */
export function callFilters(query: Record<string, unknown>): CallFilters {
  return {
    direction: query.direction as CallDirection | undefined,
    status: query.status as CallStatus | undefined,
    ...dateRange(query),
  };
}
