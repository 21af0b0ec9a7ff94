import type { Knex } from 'knex';
import { idTimeWindow } from '../ids';
import { runPrepared } from '../prepared';
import { adoptLegacyEvents, queuedSql } from './event-outbox-sql';
import { streamedSql } from './event-stream-notify';

const TABLE = 'events';

/** An event as written into the outbox. */
export interface NewEvent {
  id: string;
  tenantId: string;
  receptionistId: string | null;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
  /** W3C trace context of the span that wrote it (null: tracing off). */
  traceparent?: string | null;
  /**
   * false: a test-mode event (docs/API.md, Test mode), which goes only to the tenant's
   * test-mode subscriptions; absent: live.
   */
  livemode?: boolean;
}

/** An event as stored (whether it is still in the outbox: EventsStore.pending). */
export type StoredEvent = Omit<NewEvent, 'traceparent' | 'livemode'> & { livemode: boolean };

interface EventRow {
  id: string;
  tenant_id: string;
  receptionist_id: string | null;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
  livemode: boolean;
}

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
 * `insertEvents`' statement: the rows, the outbox rows of those with a target, the relay's
 * wake-up when there is one (queuedSql) and the event streams' when their tenant is streamed
 * (streamedSql), in one round trip.
 * Both outbox marks of the event row are set here (packages/db/src/stores/event-outbox-sql.ts:
 * the row is never updated). Named (prepared): it runs for every event emitted, and its plan
 * does not depend on the events (one JSON parameter; rows are routed to their day's partition
 * as they are inserted), so Postgres settles on one plan per connection instead of planning
 * it again each time (docs/decisions/0082-plans-made-once.md).
 */
const INSERT_EVENTS_SQL = `WITH x AS (
  SELECT x.*, t.targeted
    FROM json_to_recordset($1::json) AS x(id text, tenant_id text, receptionist_id text,
         type text, data jsonb, created_at timestamptz, traceparent text, livemode boolean)
   CROSS JOIN LATERAL (
     SELECT EXISTS (SELECT 1 FROM webhook_subscriptions s
                     WHERE s.tenant_id = x.tenant_id AND s.livemode = x.livemode
                       -- A paused subscription is a target: its deliveries wait.
                       AND (s.is_active OR s.disabled_reason = 'manual')
                       AND (s.events = '{}' OR x.type = ANY (s.events)))
         -- A legacy webhook_url takes live events only (test mode: subscriptions).
         OR (x.livemode AND EXISTS (SELECT 1 FROM receptionists r
                     WHERE r.id = x.receptionist_id AND r.webhook_url IS NOT NULL))
         AS targeted
   ) t
), inserted AS (
  INSERT INTO events (id, tenant_id, receptionist_id, type, data, created_at, traceparent,
                      published_at, fanned_out_at, livemode)
  SELECT id, tenant_id, receptionist_id, type, data, created_at, traceparent, now(), now(),
         livemode
    FROM x
), ${queuedSql('x', 'targeted')}, ${streamedSql('x')}
SELECT (SELECT count(*)::int FROM notified) AS notified,
       (SELECT count(*)::int FROM streamed) AS streamed`;

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
  await runPrepared(trx, 'sb_insert_events', INSERT_EVENTS_SQL, [
    JSON.stringify(
      events.map((e) => ({
        id: e.id,
        tenant_id: e.tenantId,
        receptionist_id: e.receptionistId,
        type: e.type,
        data: e.data,
        created_at: e.createdAt,
        traceparent: e.traceparent ?? null,
        livemode: e.livemode ?? true,
      })),
    ),
  ]);
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

  /** Which of `ids` are still in the outbox (not fanned out yet). */
  async pending(ids: readonly string[]): Promise<Set<string>> {
    const rows = (await this.db('event_outbox')
      .whereIn('event_id', ids)
      .select('event_id')) as Array<{ event_id: string }>;
    return new Set(rows.map((r) => r.event_id));
  }

  /** Whether event `id` has been fanned out (it is stored and no longer in the outbox). */
  async isFannedOut(id: string): Promise<boolean> {
    return (await this.get(id)) !== undefined && (await this.pending([id])).size === 0;
  }

  /**
   * Moves events left pending by a version before migration 098 into the outbox, up to
   * `limit`, stored `graceMs` ago or more (adoptLegacyEvents): the reconciler's list, as
   * published events whose job was lost were before. Returns how many it moved.
   */
  async adoptLegacy(graceMs: number, limit: number): Promise<number> {
    return adoptLegacyEvents(this.db, graceMs, limit);
  }
}
