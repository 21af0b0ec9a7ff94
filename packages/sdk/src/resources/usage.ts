import type { QueryOf, Usage } from '../types';
import { Resource } from './resource';

/** Minutes and messages of a billing month (the calendar month, UTC) against the plan. */
export class UsageResource extends Resource {
  /**
   * The usage of the current month, or of `period` (`YYYY-MM`):
   * `(await client.usage.get({ period: '2026-10' })).percent_used`.
   */
  get(params: QueryOf<'getUsage'> = {}): Promise<Usage> {
    return this.http.request({ method: 'GET', path: '/usage', query: params, idempotent: true });
  }
}
