import type { Knex } from 'knex';
import { idTimeWindow, timeOfId } from '../ids';
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
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
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
  /** Only the deliveries of subscriptions of this mode (docs/API.md, Test mode). */
  livemode?: boolean;
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

  /**
   * Whether the tenant's event has a delivery (whatever its outcome) to one of the tenant's
   * subscriptions, or to one of `subscriptionIds` when given: the events a portal session may
   * read (docs/decisions/0109-portal-event-page.md). A delivery is made after its event, so
   * only the days from the event's on are read (an hour earlier: the id's time is the
   * application's clock, `created_at` Postgres').
   */
  async eventDelivered(
    tenantId: string,
    eventId: string,
    subscriptionIds: readonly string[] | null,
  ): Promise<boolean> {
    const query = this.db(TABLE)
      .where({ tenant_id: tenantId, event_id: eventId })
      .whereNotNull('subscription_id');
    const at = timeOfId(eventId);
    if (at) query.andWhere('created_at', '>=', new Date(at.getTime() - HOUR_MS));
    if (subscriptionIds) query.whereIn('subscription_id', subscriptionIds);
    return (await query.first(this.db.raw('1 AS delivered'))) !== undefined;
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
   *
   * Without an event filter, the newest days alone are read first (recentPage): a page full
   * there is the page, and only the days it covers are planned, not every day kept.
   */
  async list(
    filter: DeliveryFilter,
    page: PageRequest,
  ): Promise<KeysetPage<Delivery & { eventType: string }>> {
    const span = await this.span();
    const recent = span && !filter.event ? await this.recentPage(span, filter, page) : null;
    if (recent) return recent;
    const segments = span
      ? [
          this.segment(filter, page, span.end, null),
          this.segment(filter, page, span.start, span.end),
          ...(span.start ? [this.segment(filter, page, null, span.start)] : []),
        ]
      : [this.segment(filter, page, null, null)];
    return this.page(segments, page);
  }

  /**
   * The page from the days from the day before the newest one it may hold on (the cursor's,
   * `until`'s or today's, whichever is oldest) to the cursor, or null when they hold no full
   * page. A full page there is exact: every row not read is older than every row read. The
   * bounds are plain parameters (the cursor's is implied by its row comparison), so Postgres
   * plans only those days; each row's event is looked for within eventOfDelivery's first
   * window, bounded the same way, and one not there (a fan-out delayed over a day) is found
   * by id after (eventTypes).
   */
  private async recentPage(
    span: NonNullable<Span>,
    filter: DeliveryFilter,
    page: PageRequest,
  ): Promise<KeysetPage<Delivery & { eventType: string }> | null> {
    const end = span.end.getTime();
    // Past the cursor's millisecond nothing is read (timestamptz(3): exact).
    const to = page.after ? Math.min(page.after.t + 1, end) : end;
    const newest = Math.min(Date.now(), to, filter.until ? filter.until.getTime() : Infinity);
    const from = Math.floor(newest / DAY_MS) * DAY_MS - DAY_MS;
    // Days the middle span holds only (no gap below them), or it is read whole.
    if (span.start && from <= span.start.getTime()) return null;
    const nearEvent = (hi: number | null) =>
      this.db.raw(
        `(SELECT e.type FROM events e WHERE e.id = d.event_id
             AND e.created_at BETWEEN d.created_at - interval '1 day'
                                  AND d.created_at + interval '1 hour'
             AND e.created_at >= ? AND e.created_at < ?) AS event_type`,
        [new Date(from - DAY_MS), hi === null ? 'infinity' : new Date(hi + HOUR_MS)],
      );
    const segments = [this.segment(filter, page, new Date(from), new Date(to), nearEvent(to))];
    // Rows dated beyond the ranges (the default partition) come first, unless the cursor
    // is below them.
    if (to === end) segments.unshift(this.segment(filter, page, span.end, null, nearEvent(null)));
    const result = await this.page(segments, page);
    if (!result.next) return null;
    const missing = result.rows.filter((r) => r.eventType === null);
    if (missing.length > 0) {
      const types = await this.eventTypes(missing.map((r) => r.eventId));
      for (const r of missing) r.eventType = types.get(r.eventId) ?? r.eventType;
    }
    return result;
  }

  /** The types of these events, by id (bounded to the times their ids carry). */
  private async eventTypes(ids: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(ids)];
    const [from, to] = idTimeWindow(unique);
    const rows = (await this.db('events')
      .whereIn('id', unique)
      .andWhere('created_at', '>=', from)
      .andWhere('created_at', '<', to)
      .select('id', 'type')) as Array<{ id: string; type: string }>;
    return new Map(rows.map((r) => [r.id, r.type]));
  }

  /** One span of `created_at` of the log, filtered, its first page + 1 rows newest first. */
  private segment(
    filter: DeliveryFilter,
    page: PageRequest,
    from: Date | null,
    to: Date | null,
    eventType: Knex.Raw = this.db.raw(`${eventOfDelivery('e.type')} AS event_type`),
  ): Knex.QueryBuilder {
    const q = this.db(`${TABLE} as d`).whereNotNull('d.subscription_id').select('d.*', eventType);
    if (filter.tenantId) q.where('d.tenant_id', filter.tenantId);
    if (filter.subscriptionId) q.where('d.subscription_id', filter.subscriptionId);
    if (filter.livemode !== undefined) {
      q.whereRaw(
        'EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = d.subscription_id AND s.livemode = ?)',
        [filter.livemode],
      );
    }
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
  }

  /** The page of the union of `segments`. */
  private page(
    segments: Knex.QueryBuilder[],
    page: PageRequest,
  ): Promise<KeysetPage<Delivery & { eventType: string }>> {
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
