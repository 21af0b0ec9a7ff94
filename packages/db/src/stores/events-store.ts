import type { Knex } from 'knex';
import { idTimeWindow } from '../ids';

const TABLE = 'events';

/** An event as committed to the outbox. */
export interface StoredEvent {
  id: string;
  tenantId: string;
  receptionistId: string | null;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
  publishedAt: Date | null;
  fannedOutAt: Date | null;
}

interface EventRow {
  id: string;
  tenant_id: string;
  receptionist_id: string | null;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
  published_at: Date | null;
  fanned_out_at: Date | null;
}

const toEvent = (r: EventRow): StoredEvent => ({
  id: r.id,
  tenantId: r.tenant_id,
  receptionistId: r.receptionist_id,
  type: r.type,
  data: r.data,
  createdAt: r.created_at,
  publishedAt: r.published_at,
  fannedOutAt: r.fanned_out_at,
});

export interface NewEvent {
  id: string;
  tenantId: string;
  receptionistId: string | null;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
  /** W3C trace context of the span that wrote it (null: tracing off). */
  traceparent?: string | null;
}

/** An outbox event claimed for publishing, with the trace it belongs to. */
export interface UnpublishedEvent {
  id: string;
  traceparent: string | null;
}

/**
 * Writes events into the outbox inside the caller's transaction (`emit` in packages/events),
 * so an event exists if and only if the state change it reports commits. It never runs on
 * the pool, so it is a statement of the transaction it is given, not a method of a store.
 *
 * Many events in one statement (one JSON parameter, whatever their number). An event with
 * no target when it is emitted (no active subscription of its tenant takes its type, and
 * its receptionist has no legacy webhook_url) is stored published and fanned out already:
 * it never enters the outbox or the events queue, so a flood of such events (an import in
 * a tenant without webhooks) waits behind no one and makes no one wait. Its deliveries are
 * those of the subscriptions active at emission (docs/API.md, Webhooks).
 */
export async function insertEvents(trx: Knex, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await trx.raw(
    `INSERT INTO events (id, tenant_id, receptionist_id, type, data, created_at, traceparent,
                         published_at, fanned_out_at)
     SELECT x.id, x.tenant_id, x.receptionist_id, x.type, x.data, x.created_at, x.traceparent,
            CASE WHEN t.targeted THEN NULL ELSE now() END,
            CASE WHEN t.targeted THEN NULL ELSE now() END
       FROM json_to_recordset(?::json) AS x(id text, tenant_id text, receptionist_id text,
            type text, data jsonb, created_at timestamptz, traceparent text)
      CROSS JOIN LATERAL (
        SELECT EXISTS (SELECT 1 FROM webhook_subscriptions s
                        WHERE s.tenant_id = x.tenant_id
                          -- A paused subscription is a target: its deliveries wait.
                          AND (s.is_active OR s.disabled_reason = 'manual')
                          AND (s.events = '{}' OR x.type = ANY (s.events)))
            OR EXISTS (SELECT 1 FROM receptionists r
                        WHERE r.id = x.receptionist_id AND r.webhook_url IS NOT NULL)
            AS targeted
      ) t`,
    [
      JSON.stringify(
        events.map((e) => ({
          id: e.id,
          tenant_id: e.tenantId,
          receptionist_id: e.receptionistId,
          type: e.type,
          data: e.data,
          created_at: e.createdAt,
          traceparent: e.traceparent ?? null,
        })),
      ),
    ],
  );
}

/** The event outbox (reads; the writes are `insertEvents`, in the caller's transaction). */
export class EventsStore {
  constructor(private readonly db: Knex) {}

  async get(id: string): Promise<StoredEvent | undefined> {
    const [from, to] = idTimeWindow([id]);
    const row = await this.db<EventRow>(TABLE)
      .where({ id })
      .andWhere('created_at', '>=', from)
      .andWhere('created_at', '<', to)
      .first();
    return row && toEvent(row);
  }

  /** Events of a tenant, oldest first (tests and tooling). */
  async listForTenant(tenantId: string, type?: string): Promise<StoredEvent[]> {
    const q = this.db<EventRow>(TABLE).where({ tenant_id: tenantId });
    if (type) q.andWhere({ type });
    const rows = await q.orderBy([{ column: 'created_at' }, { column: 'id' }]);
    return rows.map(toEvent);
  }

  /**
   * Claims up to `limit` unpublished events, oldest first, for the relay's transaction.
   * SKIP LOCKED lets several relays work side by side without waiting on each other.
   */
  async claimUnpublished(trx: Knex, limit: number): Promise<UnpublishedEvent[]> {
    return (await trx(TABLE)
      .select('id', 'traceparent')
      .whereNull('published_at')
      .orderBy('created_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()) as UnpublishedEvent[];
  }

  async markPublished(trx: Knex, ids: string[]): Promise<void> {
    // The partitions holding the batch's ids (they carry their times), not every day kept.
    const [from, to] = idTimeWindow(ids);
    await trx(TABLE)
      .whereIn('id', ids)
      .andWhere('created_at', '>=', from)
      .andWhere('created_at', '<', to)
      .update({ published_at: trx.fn.now() });
  }

  /** Events still not fanned out `graceMs` after they were committed: the reconciler's list. */
  async notFannedOut(graceMs: number, limit: number): Promise<string[]> {
    const rows = (await this.db(TABLE)
      .select('id')
      .whereNull('fanned_out_at')
      .andWhere(
        'created_at',
        '<',
        this.db.raw('now() - make_interval(secs => ?)', [graceMs / 1000]),
      )
      .orderBy('created_at')
      .limit(limit)) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }
}
