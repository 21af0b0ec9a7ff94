import type { Knex } from 'knex';
import { newId, newTimeOrderedIdSql } from '../ids';
import { toOpenDelivery, type DeliveryLifecycle, type OpenDelivery } from './delivery-lifecycle';
import { OPEN_COLUMNS, type OpenRow } from './delivery-lifecycle-sql';
import { aboutSubscriptionSql } from './operational-events-sql';

/** A recovery with its counts, computed from its deliveries as they are now. */
export interface WebhookRecovery {
  id: string;
  subscriptionId: string;
  since: Date;
  until: Date;
  status: 'running' | 'completed';
  found: number;
  queued: number;
  delivered: number;
  failed: number;
  createdAt: Date;
  completedAt: Date | null;
}

interface RecoveryRow {
  id: string;
  subscription_id: string;
  since: Date;
  until: Date;
  status: 'running' | 'completed';
  found: number;
  created_at: Date;
  completed_at: Date | null;
  queued: number;
  delivered: number;
  failed: number;
}

const toRecovery = (r: RecoveryRow): WebhookRecovery => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  since: r.since,
  until: r.until,
  status: r.status,
  found: r.found,
  queued: r.queued,
  delivered: r.delivered,
  failed: r.failed,
  createdAt: r.created_at,
  completedAt: r.completed_at,
});

/**
 * Marks completed the running recoveries (of one subscription, or the one given) whose
 * deliveries are all final, then reads them with their counts. One statement: the counts
 * and the status never disagree.
 */
const REFRESH_SQL = (where: string) => `
  WITH counted AS (
    SELECT r.id,
           count(d.id) FILTER (WHERE d.status IN ('pending', 'delivering'))::int AS queued,
           count(d.id) FILTER (WHERE d.status = 'succeeded')::int AS delivered,
           count(d.id) FILTER (WHERE d.status IN ('failed', 'canceled'))::int AS failed
      FROM webhook_recoveries r
      LEFT JOIN webhook_deliveries d
        ON d.subscription_id = r.subscription_id AND d.id = ANY (r.delivery_ids)
     WHERE ${where}
     GROUP BY r.id
  ), done AS (
    UPDATE webhook_recoveries r SET status = 'completed', completed_at = now()
      FROM counted c
     WHERE r.id = c.id AND r.status = 'running' AND c.queued = 0
  RETURNING r.id
  )
  SELECT r.id, r.subscription_id, r.since, r.until, r.found, r.created_at,
         CASE WHEN r.id IN (SELECT id FROM done) THEN 'completed' ELSE r.status END AS status,
         CASE WHEN r.id IN (SELECT id FROM done) THEN now() ELSE r.completed_at END
           AS completed_at,
         c.queued, c.delivered, c.failed
    FROM webhook_recoveries r JOIN counted c ON c.id = r.id`;

/** What {@link WebhookRecoveriesStore.start} did. */
export type StartRecoveryResult =
  | { kind: 'started'; recovery: WebhookRecovery; deliveries: OpenDelivery[] }
  | { kind: 'in_progress' };

/**
 * How much earlier than its event's `created_at` a delivery's `created_at` can be. A delivery
 * is made after its event committed (by the fan-out of the relayed event, or by a recovery),
 * at Postgres' `now()`; the event's `created_at` is the application's clock, which may run
 * ahead of Postgres' (the same allowance as the claim's read of a delivery's event). So the
 * deliveries of the events created since T all lie in the partitions from T minus this on:
 * the recovery's check for an existing delivery reads those days, not every day kept, and
 * the plain `e.created_at >= since` lets Postgres prune the events' days when it plans.
 */
const DELIVERY_AFTER_EVENT = "interval '1 hour'";

/**
 * Recoveries (POST /webhooks/{id}/recover): resend what failed, send what was missed. A
 * recovery has a lifecycle of its own, kept here whole: inserted `running` (or `completed`
 * when it found nothing), then `completed` by REFRESH_SQL once none of its deliveries is
 * open; it emits no event. It changes no state of its subscription.
 */
export class WebhookRecoveriesStore {
  constructor(
    private readonly db: Knex,
    private readonly deliveries: DeliveryLifecycle,
  ) {}

  async get(tenantId: string, subscriptionId: string, id: string) {
    const { rows } = (await this.db.raw(
      REFRESH_SQL('r.id = ? AND r.tenant_id = ? AND r.subscription_id = ?'),
      [id, tenantId, subscriptionId],
    )) as { rows: RecoveryRow[] };
    return rows[0] && toRecovery(rows[0]);
  }

  /**
   * In one transaction: refuses while a recovery of the subscription runs; starts a new
   * round (fresh attempt budget, same event id) for every failed or cancelled delivery
   * created in `[since, until)`; makes a delivery for every event of the window that matched
   * the subscription (its events, its tenant; made after it) but has none because the
   * subscription was disabled. The caller enqueues the returned deliveries.
   */
  async start(input: {
    tenantId: string;
    subscriptionId: string;
    since: Date;
    until: Date;
  }): Promise<StartRecoveryResult> {
    const { tenantId, subscriptionId, since, until } = input;
    return this.db.transaction(async (trx) => {
      // Serialises recoveries of one subscription (and this check) on its row.
      await trx('webhook_subscriptions').where({ id: subscriptionId }).forNoKeyUpdate().first('id');
      const { rows: running } = (await trx.raw(
        REFRESH_SQL("r.subscription_id = ? AND r.status = 'running'"),
        [subscriptionId],
      )) as { rows: RecoveryRow[] };
      if (running.some((r) => r.status === 'running')) return { kind: 'in_progress' };
      const resent = await this.deliveries.resend(trx, input);
      const { rows: missed } = (await trx.raw(
        `INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, next_attempt_at)
         SELECT ${newTimeOrderedIdSql('dlv', 'row_number() OVER (ORDER BY e.created_at, e.id)')},
                e.tenant_id, e.id, s.id, now()
           FROM webhook_subscriptions s
           JOIN events e ON e.tenant_id = s.tenant_id AND e.livemode = s.livemode
          WHERE s.id = ? AND e.created_at >= greatest(?::timestamptz, s.created_at)
            AND e.created_at >= ? AND e.created_at < ? AND e.fanned_out_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM event_outbox o WHERE o.event_id = e.id)
            AND (s.events = '{}' OR e.type = ANY (s.events))
            AND ${aboutSubscriptionSql('e')} IS DISTINCT FROM s.id::text
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                             WHERE d.subscription_id = s.id AND d.event_id = e.id
                               AND d.created_at >= ?::timestamptz - ${DELIVERY_AFTER_EVENT})
         ON CONFLICT DO NOTHING
      RETURNING ${OPEN_COLUMNS}`,
        [subscriptionId, since, since, until, since],
      )) as { rows: OpenRow[] };
      const all = [...resent, ...missed.map(toOpenDelivery)];
      const id = newId('rec');
      await trx('webhook_recoveries').insert({
        id,
        tenant_id: tenantId,
        subscription_id: subscriptionId,
        since,
        until,
        delivery_ids: all.map((d) => d.id),
        found: all.length,
        status: all.length === 0 ? 'completed' : 'running',
        completed_at: all.length === 0 ? trx.fn.now() : null,
      });
      const { rows } = (await trx.raw(REFRESH_SQL('r.id = ?'), [id])) as { rows: RecoveryRow[] };
      return {
        kind: 'started',
        recovery: toRecovery(rows[0] as RecoveryRow),
        deliveries: all,
      };
    });
  }
}
