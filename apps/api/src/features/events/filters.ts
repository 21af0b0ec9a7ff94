import type { EventLogFilter } from '@switchboard/db';
import type { Deps } from '../../deps';
import { ApiError, notFound } from '../../errors';
import { dateRange } from '../../pagination/date-range';

const DAY_MS = 86_400_000;

/**
 * The validated query's filters (eventFilterProperties) as the store's, for a key of mode
 * `livemode`: a key reads the events of its own mode only (docs/API.md, Test mode).
 */
export function eventFilter(query: Record<string, unknown>, livemode: boolean): EventLogFilter {
  const types = query.type as string[] | undefined;
  const receptionistId = query.receptionist_id as string | undefined;
  return {
    livemode,
    ...dateRange(query, { from: 'created_from', to: 'created_to' }),
    ...(types?.length ? { types: [...new Set(types)] } : {}),
    ...(receptionistId ? { receptionistId } : {}),
  };
}

/** How long a tenant's events are kept, and since when (docs/API.md, Events). */
export interface EventRetention {
  days: number;
  since: Date;
}

/**
 * Events are kept as long as the tenant's delivery history (its own retention, else
 * DELIVERY_RETENTION_DAYS): reads never return an older one, even before the maintenance
 * job has removed it, so what is "expired" does not depend on when that job last ran.
 */
export async function eventRetention(deps: Deps, tenantId: string): Promise<EventRetention> {
  const own = await deps.stores.tenantRetention.get(tenantId);
  const days = own?.deliveryDays ?? deps.config.deliveryRetentionDays;
  return { days, since: new Date(Date.now() - days * DAY_MS) };
}

/** 404 unless the receptionist of a `receptionist_id` filter is the tenant's. */
export async function ownReceptionistFilter(
  deps: Deps,
  tenantId: string,
  filter: EventLogFilter,
): Promise<void> {
  if (!filter.receptionistId) return;
  const found = await deps.stores.receptionists.get(deps.knex, tenantId, filter.receptionistId);
  if (!found) throw notFound('receptionist', 'receptionist_id');
}

/** The 404 of an event id that is older than what the tenant keeps. */
export const expiredEvent = (id: string, param: string, retention: EventRetention): ApiError =>
  new ApiError(
    404,
    'invalid_request_error',
    'resource_not_found',
    `Event ${id} is older than this tenant's event history, which keeps ${retention.days} days`,
    param,
  );
