import type { Knex } from 'knex';
import { idTimeWindow } from '../ids';
import { newestFirst, type KeysetPage, type KeysetPosition, type PageRequest } from '../keyset';
import type { StoredEvent } from './events-store';

const TABLE = 'events';

/** Filters of a tenant's event log (docs/API.md, Events). */
export interface EventLogFilter {
  /** The key's mode: a key reads the events of its mode only (docs/API.md, Test mode). */
  livemode: boolean;
  /** Any of these types; absent: every type. */
  types?: readonly string[];
  receptionistId?: string;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  toExclusive?: Date;
}

interface EventRow {
  id: string;
  tenant_id: string;
  receptionist_id: string | null;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
  livemode: boolean;
}

const COLUMNS = [
  'id',
  'tenant_id',
  'receptionist_id',
  'type',
  'data',
  'created_at',
  'livemode',
] as const;

const toEvent = (r: EventRow): StoredEvent => ({
  id: r.id,
  tenantId: r.tenant_id,
  receptionistId: r.receptionist_id,
  type: r.type,
  data: r.data,
  createdAt: r.created_at,
  livemode: r.livemode,
});

/**
 * Events read after a position, and `now()` of the statement that read them (also when it
 * read none): a time no later than its snapshot, so every event dated `readAt - x` or
 * earlier whose transaction had committed `x` after its date is among them (up to the limit).
 */
export interface EventsAfter {
  events: StoredEvent[];
  readAt: Date;
}

/**
 * Whether `e` passes `filter`, as `EventLogStore`'s reads apply it in SQL (the tenant and the
 * retention cutoff aside): for a read shared by streams with different filters.
 */
export function matchesEventLogFilter(e: StoredEvent, filter: EventLogFilter): boolean {
  return (
    e.livemode === filter.livemode &&
    (!filter.from || e.createdAt >= filter.from) &&
    (!filter.toExclusive || e.createdAt < filter.toExclusive) &&
    (!filter.types?.length || filter.types.includes(e.type)) &&
    (!filter.receptionistId || e.receptionistId === filter.receptionistId)
  );
}

/**
 * The tenant-facing reads of `events` (the outbox store, EventsStore, writes and relays
 * them): the event log newest first, one event, and the events after a position oldest
 * first (event streams). Every read names the tenant and a lower bound on `created_at` (the
 * tenant's retention cutoff, `since`), so it reads `events_tenant_created_idx` (migration
 * 105) in the days it may hold only: a bound is always a plain comparison on the partition
 * key, which Postgres prunes with (a row comparison alone prunes nothing).
 */
export class EventLogStore {
  constructor(private readonly db: Knex) {}

  private filtered(tenantId: string, filter: EventLogFilter, since: Date): Knex.QueryBuilder {
    const q = this.db<EventRow>(TABLE)
      .where('tenant_id', tenantId)
      .andWhere('livemode', filter.livemode)
      .andWhere('created_at', '>=', filter.from && filter.from > since ? filter.from : since);
    if (filter.toExclusive) q.andWhere('created_at', '<', filter.toExclusive);
    if (filter.types?.length) q.whereIn('type', filter.types);
    if (filter.receptionistId) q.andWhere('receptionist_id', filter.receptionistId);
    return q;
  }

  /** A page of the tenant's events dated `since` or later, newest first by (created_at, id). */
  async page(
    tenantId: string,
    filter: EventLogFilter,
    since: Date,
    page: PageRequest,
  ): Promise<KeysetPage<StoredEvent>> {
    const q = this.filtered(tenantId, filter, since).select(...COLUMNS);
    if (page.after) q.andWhere('created_at', '<=', new Date(page.after.t));
    return newestFirst<EventRow, StoredEvent>(q, page, toEvent, { time: 'created_at' });
  }

  /**
   * The tenant's event `id` if it is dated `since` or later (bounded by its id's time) and
   * of the mode `livemode`.
   */
  async get(
    tenantId: string,
    id: string,
    since: Date,
    livemode: boolean,
  ): Promise<StoredEvent | undefined> {
    const [from, to] = idTimeWindow([id]);
    const row = (await this.db<EventRow>(TABLE)
      .select(...COLUMNS)
      .where({ id, tenant_id: tenantId, livemode })
      .andWhere('created_at', '>=', from)
      .andWhere('created_at', '<', to)
      .andWhere('created_at', '>=', since)
      .first()) as EventRow | undefined;
    return row && toEvent(row);
  }

  /**
   * Up to `limit` of the tenant's events after `after`, oldest first by (created_at, id),
   * with Postgres' clock at the read (the caller decides which are old enough to send).
   */
  async after(
    tenantId: string,
    filter: EventLogFilter,
    since: Date,
    after: KeysetPosition,
    limit: number,
  ): Promise<EventsAfter> {
    const at = new Date(after.t);
    const q = this.filtered(tenantId, filter, since)
      .select(...COLUMNS)
      .andWhere('created_at', '>=', at)
      .andWhereRaw('(created_at, id) > (?, ?)', [at, after.id])
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .limit(limit);
    // One row with the clock and no event when none follows.
    const { rows } = (await this.db.raw(
      `SELECT n.read_at, e.* FROM (SELECT now() AS read_at) n LEFT JOIN ? e ON true
        ORDER BY e.created_at, e.id`,
      [q],
    )) as { rows: Array<{ read_at: Date } & (EventRow | Record<keyof EventRow, null>)> };
    const readAt = rows[0]?.read_at;
    if (!readAt) throw new Error('event log: the read returned no clock');
    return { events: rows.flatMap((r) => (r.id === null ? [] : [toEvent(r)])), readAt };
  }

  /** Postgres' clock. */
  async now(): Promise<Date> {
    const { rows } = (await this.db.raw('SELECT now() AS now')) as { rows: Array<{ now: Date }> };
    return rows[0]?.now ?? new Date();
  }
}
