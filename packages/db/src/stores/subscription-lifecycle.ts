import type { Knex } from 'knex';
import { explainMiss, whereVersion, type VersionCondition } from '../versions';
import {
  SUBSCRIPTION_COLUMNS,
  toSubscription,
  type WebhookSubscription,
  type WebhookSubscriptionRow,
} from './webhook-subscription-rows';

const TABLE = 'webhook_subscriptions';

/** The fields PATCH /webhooks/{id} may change; absent = unchanged. */
export interface WebhookSubscriptionPatch {
  url?: string;
  events?: string[];
  description?: string | null;
  isActive?: boolean;
  rateLimitPerSecond?: number | null;
}

/**
 * RECORD_SQL's part (delivery-lifecycle-sql.ts): a success zeroes the streak and the failing
 * level (`recovered`), a failure stamps `last_failure_at`. Reads the statement's CTE
 * `touched` (per subscription: any success, any failure among the deliveries that moved);
 * defines `locked` (the rows as before the update, locked in id order, only where the update
 * changes more than sub-second timestamps) and `counters` (as after it), which
 * RECOVERED_INSERT_SQL reads to write webhook.recovered.
 */
export const SUBSCRIPTION_RECORD_CTES = `locked AS (
       SELECT s.id, s.tenant_id, s.url, s.consecutive_failures, s.failing_level, s.livemode
         FROM webhook_subscriptions s JOIN touched t ON t.id = s.id
        WHERE (t.any_success AND (s.consecutive_failures <> 0 OR s.failing_level <> 0
                                  OR s.last_success_at IS NULL
                                  OR s.last_success_at < now() - interval '1 second'))
           OR (t.any_failure AND (s.last_failure_at IS NULL
                                  OR s.last_failure_at < now() - interval '1 second'))
        ORDER BY s.id FOR NO KEY UPDATE OF s
     ), counters AS (
       UPDATE webhook_subscriptions s
          SET consecutive_failures = CASE WHEN t.any_success THEN 0 ELSE s.consecutive_failures END,
              failing_level = CASE WHEN t.any_success THEN 0 ELSE s.failing_level END,
              last_delivery_at = now(),
              last_success_at = CASE WHEN t.any_success THEN now() ELSE s.last_success_at END,
              last_failure_at = CASE WHEN t.any_failure THEN now() ELSE s.last_failure_at END
         FROM touched t
        WHERE s.id = t.id AND s.id IN (SELECT id FROM locked)
    RETURNING s.id, s.last_success_at
     )`;

/**
 * EXHAUST_SQL's part (delivery-lifecycle-sql.ts): a delivery's last attempt failed, so the
 * streak grows by one (`failing` when it enters a higher level) and, at the threshold, an
 * active subscription is disabled (`consecutive_failures`). Defines `counted`; reads the
 * statement's CTEs `subscription` (the row as before the statement, locked) and `moved` (the
 * delivery did fail), $8 the subscription id and $10 the threshold. `disabled_now` is true
 * only for the statement that crossed the threshold: EXHAUST_SQL then cancels the other open
 * deliveries and FAILING_DISABLED_INSERT_SQL writes webhook.disabled.
 */
export const SUBSCRIPTION_EXHAUST_CTE = `counted AS (
       UPDATE webhook_subscriptions s
          SET consecutive_failures = s.consecutive_failures + 1,
              last_delivery_at = now(),
              last_failure_at = now(),
              -- 1 from half the threshold on, 2 from three quarters; it only grows in a streak.
              failing_level = CASE WHEN NOT s.is_active THEN s.failing_level
                                   ELSE greatest(s.failing_level, CASE
                                     WHEN s.consecutive_failures + 1 >= ceil($10::int * 0.75) THEN 2
                                     WHEN s.consecutive_failures + 1 >= ceil($10::int * 0.5) THEN 1
                                     ELSE 0 END) END,
              is_active = s.is_active AND s.consecutive_failures + 1 < $10::int,
              disabled_at = CASE WHEN s.is_active AND s.consecutive_failures + 1 >= $10::int
                                 THEN now() ELSE s.disabled_at END,
              disabled_reason = CASE WHEN s.is_active AND s.consecutive_failures + 1 >= $10::int
                                     THEN 'consecutive_failures' ELSE s.disabled_reason END,
              updated_at = now()
        WHERE s.id = $8::uuid AND EXISTS (SELECT 1 FROM moved)
    RETURNING s.consecutive_failures AS failures, s.failing_level, s.disabled_at,
              (SELECT was.is_active AND was.consecutive_failures + 1 >= $10::int
                 FROM subscription was) AS disabled_now
     )`;

/**
 * The webhook subscription lifecycle. The state is `is_active` with `disabled_reason` and
 * `disabled_at`, and, while active, the failure streak (`consecutive_failures`) with the
 * level of webhook.failing it reached (`failing_level`):
 *
 *   (create) ─▶ active ──pause──────────────────────────▶ paused    (reason manual)
 *                │  ▲ └──exhaust, streak = threshold──▶ disabled  (reason consecutive_failures)
 *                │  └──────────── enable ◀───────────── paused | disabled
 *   while active:  healthy ──exhaust, streak ≥ ½ then ≥ ¾ of the threshold──▶ failing (level 1, 2)
 *                  failing ──record, a success──▶ healthy (streak and level 0)
 *
 * Each transition, the statement that makes it, and its event:
 * - pause, enable: `update` (PATCH /webhooks/{id}), in one statement with the PATCH's other
 *   fields; `enable` (POST /webhooks/{id}/enable) is the same statement. Pause: webhook.disabled (reason manual, nothing cancelled), emitted by the caller
 *   in the update's transaction after `lockActive` (apps/api/src/features/webhooks/pause.ts).
 *   Enable: no event; the caller then wakes the deliveries that waited
 *   (DeliveryLifecycle.wake).
 * - failing, disabled: SUBSCRIPTION_EXHAUST_CTE, inside the delivery lifecycle's exhaust
 *   statement (EXHAUST_SQL), which writes webhook.failing and webhook.disabled there
 *   (operational-events-sql.ts) and cancels the open deliveries of a disabled subscription.
 * - recovered: SUBSCRIPTION_RECORD_CTES, inside the delivery lifecycle's record statement
 *   (RECORD_SQL), which writes webhook.recovered there.
 *   These two are fragments, not methods: the delivery statements run once per batch of
 *   attempts (one round trip, one commit) and the subscription's change must commit with
 *   the attempt that caused it. The SQL lives here; the delivery statements include it.
 * - create and delete write no state (WebhookSubscriptionsStore: a new row is active by the
 *   columns' defaults) and emit nothing. A recovery (POST /webhooks/{id}/recover) changes no
 *   state of the subscription: its own running → completed is webhook-recoveries-store.ts's.
 *
 * Invariants: `is_active` is false exactly when `disabled_reason` is set. A pause keeps the
 * reason and time of a subscription disabled already, and only the exhaust statement that
 * crosses the threshold disables, so webhook.disabled is written once per disable (the row
 * is locked first in both). `failing_level` only grows within a streak (each webhook.failing
 * once per streak) and survives an enable, so the next success sends webhook.recovered. A
 * paused subscription still gets deliveries (they wait); a disabled one gets none.
 */
export class SubscriptionLifecycle {
  /**
   * Whether the tenant's subscription is active, its row locked (FOR NO KEY UPDATE) for the
   * rest of the caller's transaction; undefined when not found.
   */
  async lockActive(trx: Knex, tenantId: string, id: string): Promise<boolean | undefined> {
    const row = (await trx(TABLE)
      .where({ tenant_id: tenantId, id })
      .forNoKeyUpdate()
      .first('is_active')) as { is_active: boolean } | undefined;
    return row?.is_active;
  }

  /**
   * paused | disabled → active (POST /webhooks/{id}/enable), the failure counter zeroed: the
   * PATCH `{isActive: true}`. Undefined if not found.
   */
  async enable(db: Knex, tenantId: string, id: string): Promise<WebhookSubscription | undefined> {
    return this.update(db, tenantId, id, { isActive: true });
  }

  /**
   * Applies a PATCH. `isActive: false` pauses (reason `manual`; a subscription disabled
   * already keeps its reason and time); `isActive: true` enables and zeroes the failure
   * counter. The failing level stays: the next success then sends webhook.recovered, as for
   * any subscription that sent webhook.failing. Counts one more version. Undefined if not
   * found; VersionMismatch when its version is not one `condition` accepts.
   */
  async update(
    db: Knex,
    tenantId: string,
    id: string,
    patch: WebhookSubscriptionPatch,
    condition: VersionCondition = null,
  ): Promise<WebhookSubscription | undefined> {
    const raw = db.raw.bind(db);
    const set: Record<string, unknown> = { updated_at: db.fn.now(), version: raw('version + 1') };
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.events !== undefined) set.events = patch.events;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.rateLimitPerSecond !== undefined) {
      set.rate_limit_per_second = patch.rateLimitPerSecond;
    }
    if (patch.isActive === true) {
      Object.assign(set, {
        is_active: true,
        consecutive_failures: 0,
        disabled_at: null,
        disabled_reason: null,
      });
    } else if (patch.isActive === false) {
      Object.assign(set, {
        is_active: false,
        disabled_at: raw('CASE WHEN is_active THEN now() ELSE disabled_at END'),
        disabled_reason: raw("CASE WHEN is_active THEN 'manual' ELSE disabled_reason END"),
      });
    }
    const where = { tenant_id: tenantId, id };
    const [row] = await whereVersion(db(TABLE).where(where), condition)
      .update(set)
      .returning(SUBSCRIPTION_COLUMNS);
    if (!row) await explainMiss(db, TABLE, where, condition);
    return row ? toSubscription(row as WebhookSubscriptionRow) : undefined;
  }
}
