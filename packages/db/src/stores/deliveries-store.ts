import type { Knex } from 'knex';
import { idTimeWindow } from '../ids';
import { newestFirst, type KeysetPage, type PageRequest } from '../keyset';
import { eventOfDelivery } from './event-of-delivery';

const TABLE = 'webhook_deliveries';

export type DeliveryStatus = 'pending' | 'delivering' | 'succeeded' | 'failed' | 'canceled';
export const FINAL_DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'succeeded',
  'failed',
  'canceled',
];

/** Filters of the delivery log (docs/API.md, Webhooks); `until` is exclusive. */
export interface DeliveryFilter {
  tenantId?: string;
  subscriptionId?: string;
  statuses?: readonly DeliveryStatus[];
  event?: string;
  since?: Date;
  until?: Date;
}

export interface Delivery {
  id: string;
  tenantId: string;
  eventId: string;
  /** Set for subscription deliveries; null for the legacy receptionist webhook_url. */
  subscriptionId: string | null;
  receptionistId: string | null;
  status: DeliveryStatus;
  attempts: number;
  round: number;
  /** Claims of the current attempt whose outcome was not recorded (see migration 007). */
  claims: number;
  nextAttemptAt: Date | null;
  lockedUntil: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  completedAt: Date | null;
  firstSuccessAt: Date | null;
}

/** The row shape; exported for the delivery lifecycle's statements only. */
export interface DeliveryRow {
  id: string;
  tenant_id: string;
  event_id: string;
  subscription_id: string | null;
  receptionist_id: string | null;
  status: DeliveryStatus;
  attempts: number;
  round: number;
  claims: number;
  next_attempt_at: Date | null;
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  first_success_at: Date | null;
}

export const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  tenantId: r.tenant_id,
  eventId: r.event_id,
  subscriptionId: r.subscription_id,
  receptionistId: r.receptionist_id,
  status: r.status,
  attempts: r.attempts,
  round: r.round,
  claims: r.claims,
  nextAttemptAt: r.next_attempt_at,
  lockedUntil: r.locked_until,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  completedAt: r.completed_at,
  firstSuccessAt: r.first_success_at,
});

/** What one attempt's outcome does to its delivery row. */
export type AttemptOutcome =
  { kind: 'succeeded' } | { kind: 'retry'; nextAttemptAt: Date } | { kind: 'failed' };

/**
 * Reads of deliveries. Every write (every transition of a delivery) is in DeliveryLifecycle.
 */
export class DeliveriesStore {
  constructor(private readonly db: Knex) {}

  async get(db: Knex, id: string): Promise<Delivery | undefined> {
    const [from, to] = idTimeWindow([id]);
    const row = await db<DeliveryRow>(TABLE)
      .where({ id })
      .andWhere('created_at', '>=', from)
      .andWhere('created_at', '<', to)
      .first();
    return row && toDelivery(row);
  }

  /** A subscription's delivery log, newest first. */
  async listForSubscription(
    subscriptionId: string,
    page: PageRequest,
    filter: Omit<DeliveryFilter, 'tenantId' | 'subscriptionId'> = {},
  ): Promise<KeysetPage<Delivery & { eventType: string }>> {
    return this.list({ ...filter, subscriptionId }, page);
  }

  /**
   * Deliveries to subscriptions (never the legacy per-receptionist ones), newest first,
   * filtered; `tenantId` and/or `subscriptionId` scope them.
   */
  async list(
    filter: DeliveryFilter,
    page: PageRequest,
  ): Promise<KeysetPage<Delivery & { eventType: string }>> {
    const q = this.db(`${TABLE} as d`)
      .whereNotNull('d.subscription_id')
      .select('d.*', this.db.raw(`${eventOfDelivery('e.type')} AS event_type`));
    if (filter.tenantId) q.where('d.tenant_id', filter.tenantId);
    if (filter.subscriptionId) q.where('d.subscription_id', filter.subscriptionId);
    if (filter.statuses) q.whereIn('d.status', filter.statuses);
    if (filter.event) q.whereRaw(`${eventOfDelivery('e.type')} = ?`, [filter.event]);
    if (filter.since) q.where('d.created_at', '>=', filter.since);
    if (filter.until) q.where('d.created_at', '<', filter.until);
    const toItem = (r: DeliveryRow & { event_type: string }) => ({
      ...toDelivery(r),
      eventType: r.event_type,
    });
    return newestFirst(q, page, toItem, { time: 'created_at', alias: 'd' });
  }
}
