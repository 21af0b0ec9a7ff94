import type { Knex } from 'knex';
import { idTimeWindow } from '../ids';
import { newestFirst, type KeysetPage, type PageRequest } from '../keyset';
import { contiguousSpan } from '../partitions/catalog';
import { PARTITIONED_TABLES, type PartitionedTable } from '../partitions/spec';
import { eventOfDelivery } from './event-of-delivery';

const TABLE = 'webhook_deliveries';
const DELIVERIES_PARTITIONING = PARTITIONED_TABLES.find(
  (t) => t.table === TABLE,
) as PartitionedTable;
/** How long the delivery log reuses the partitions' span it read from the catalog. */
const SPAN_TTL_MS = 60_000;
type Span = Awaited<ReturnType<typeof contiguousSpan>>;

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
   *
   * Read as three spans of `created_at`, newest first, which together cover every time
   * whatever their bounds: from the end of the last daily range on (only the default
   * partition: rows dated beyond the ranges made so far), the ranges without a gap below it
   * (the retention window), and everything older (the archive, the default's rows in a gap
   * left by retention). The middle span excludes the default partition, so Postgres reads
   * its days newest first and stops once the page is full (an ordered Append) instead of
   * merging the newest rows of every day kept; the outer spans are an index probe each.
   * The bounds come from the catalog (cached a minute): stale bounds only make the middle
   * span merge again until they are read anew, never change the page.
   */
  async list(
    filter: DeliveryFilter,
    page: PageRequest,
  ): Promise<KeysetPage<Delivery & { eventType: string }>> {
    const span = await this.span();
    const segment = (from: Date | null, to: Date | null): Knex.QueryBuilder => {
      const q = this.db(`${TABLE} as d`)
        .whereNotNull('d.subscription_id')
        .select('d.*', this.db.raw(`${eventOfDelivery('e.type')} AS event_type`));
      if (filter.tenantId) q.where('d.tenant_id', filter.tenantId);
      if (filter.subscriptionId) q.where('d.subscription_id', filter.subscriptionId);
      if (filter.statuses) q.whereIn('d.status', filter.statuses);
      if (filter.event) q.whereRaw(`${eventOfDelivery('e.type')} = ?`, [filter.event]);
      if (filter.since) q.where('d.created_at', '>=', filter.since);
      if (filter.until) q.where('d.created_at', '<', filter.until);
      if (from) q.where('d.created_at', '>=', from);
      if (to) q.where('d.created_at', '<', to);
      if (page.after) {
        q.whereRaw('(d.created_at, d.id) < (?, ?)', [new Date(page.after.t), page.after.id]);
      }
      return q
        .orderBy([
          { column: 'd.created_at', order: 'desc' },
          { column: 'd.id', order: 'desc' },
        ])
        .limit(page.limit + 1);
    };
    const segments = span
      ? [
          segment(span.end, null),
          segment(span.start, span.end),
          ...(span.start ? [segment(null, span.start)] : []),
        ]
      : [segment(null, null)];
    const union = this.db.unionAll(segments, true);
    const q = this.db.select('*').from(union.as('p'));
    const toItem = (r: DeliveryRow & { event_type: string }) => ({
      ...toDelivery(r),
      eventType: r.event_type,
    });
    // The outer query orders the spans' rows again (a merge of three short lists).
    return newestFirst(q, page, toItem, { time: 'created_at', alias: 'p' });
  }

  private spanCache: { at: number; span: Promise<Span> } | null = null;

  /** The daily ranges' gapless span (packages/db/src/partitions), read at most once a minute. */
  private span(): Promise<Span> {
    const now = Date.now();
    if (!this.spanCache || now - this.spanCache.at > SPAN_TTL_MS) {
      const span = contiguousSpan(this.db, DELIVERIES_PARTITIONING).catch(() => null);
      this.spanCache = { at: now, span };
    }
    return this.spanCache.span;
  }
}
