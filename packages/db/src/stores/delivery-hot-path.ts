import type { Knex } from 'knex';
import { ASYNC_COMMIT_CTE } from '../commit';
import { runPrepared } from '../prepared';
import { toPgText } from '../text';
import {
  toDelivery,
  type AttemptOutcome,
  type Delivery,
  type DeliveryRow,
} from './deliveries-store';

/**
 * The two statements of a delivery attempt's hot path, each one round trip. They read or
 * write several tables at once on purpose: a claim that also returns the event and the
 * subscription's target, and an attempt record that moves the delivery and the subscription
 * counters in one atomic statement (data-modifying CTEs), instead of a transaction of five.
 * Rare paths (exhaustion, auto-disable) keep using the per-table stores in a transaction.
 *
 * All three commit asynchronously (ASYNC_COMMIT_CTE): a claim, an attempt record or a fan-out
 * lost in a Postgres crash is redone by the reconciler, and a redelivery carries the same
 * event id (at least once). The outbox event itself was committed durably by its producer.
 */

interface ClaimRow extends DeliveryRow {
  event_type: string;
  event_data: Record<string, unknown>;
  event_created_at: Date;
  event_receptionist_id: string | null;
  subscription: { url: string; is_active: boolean; tenant_id: string; ciphertext: string } | null;
}

export interface ClaimedDelivery {
  delivery: Delivery;
  event: {
    id: string;
    type: string;
    data: Record<string, unknown>;
    receptionistId: string | null;
    createdAt: Date;
  };
  /** The subscription's target as it is now (null for legacy or deleted subscriptions). */
  subscription: { url: string; isActive: boolean; tenantId: string; ciphertext: string } | null;
}

/**
 * Claims attempt `attempt` of round `round` and returns what the attempt needs, in one
 * statement. Only the job made for this exact round and attempt can claim the row, and only
 * one worker at a time; a claim left by a crashed worker lapses at `locked_until`. The claim
 * counts itself in `claims` (the returned delivery carries the count, this claim included).
 */
export async function claimDelivery(
  db: Knex,
  id: string,
  round: number,
  attempt: number,
  lockMs: number,
): Promise<ClaimedDelivery | undefined> {
  const rows = await runPrepared<ClaimRow>(
    db,
    'sb_claim_delivery',
    `WITH ${ASYNC_COMMIT_CTE}
     UPDATE webhook_deliveries d
        SET status = 'delivering', locked_until = now() + make_interval(secs => $4::float8),
            claims = d.claims + 1, updated_at = now()
       FROM events e, async_commit
      WHERE d.id = $1 AND d.round = $2::int AND d.attempts = $3::int AND e.id = d.event_id
        AND (d.status = 'pending' OR (d.status = 'delivering' AND d.locked_until < now()))
  RETURNING d.id, d.tenant_id, d.event_id, d.subscription_id, d.receptionist_id, d.status,
            d.attempts, d.round, d.next_attempt_at, d.locked_until, d.last_status_code,
            d.last_error, d.created_at, d.updated_at, d.completed_at, d.first_success_at,
            d.claims, e.type AS event_type, e.data AS event_data, e.created_at AS event_created_at,
            e.receptionist_id AS event_receptionist_id,
            (SELECT json_build_object('url', s.url, 'is_active', s.is_active,
                                      'tenant_id', s.tenant_id, 'ciphertext', s.secret_ciphertext)
               FROM webhook_subscriptions s WHERE s.id = d.subscription_id) AS subscription`,
    [id, round, attempt - 1, lockMs / 1000],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    delivery: toDelivery(r),
    event: {
      id: r.event_id,
      type: r.event_type,
      data: r.event_data,
      receptionistId: r.event_receptionist_id,
      createdAt: r.event_created_at,
    },
    subscription: r.subscription && {
      url: r.subscription.url,
      isActive: r.subscription.is_active,
      tenantId: r.subscription.tenant_id,
      ciphertext: r.subscription.ciphertext,
    },
  };
}

export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  excerpt: string | null;
}

/**
 * Records a succeeded attempt, or a failed one that will be retried, in one statement: the
 * attempt row (unless `logAttempt` is false: the last resort when the row itself cannot be
 * stored); the delivery row, only if it is still at the claimed round and attempt (a manual
 * retry may have started a new round); and the subscription's timestamps and streak, only if
 * the delivery moved, and only when that changes more than sub-second timestamps (so
 * concurrent deliveries do not queue on the subscription row). Returns whether the delivery
 * moved. The response excerpt is outside text: stored through `toPgText`.
 */
export async function recordAttemptFast(
  db: Knex,
  d: Delivery,
  a: AttemptRecord,
  outcome: Extract<AttemptOutcome, { kind: 'succeeded' } | { kind: 'retry' }>,
  logAttempt = true,
): Promise<boolean> {
  const success = outcome.kind === 'succeeded';
  const rows = await runPrepared<{ moved: number }>(
    db,
    'sb_record_attempt',
    `WITH ${ASYNC_COMMIT_CTE}, attempt AS (
       INSERT INTO webhook_delivery_attempts
              (delivery_id, round, attempt, status_code, error, duration_ms, response_excerpt)
       SELECT $1, $2::int, $3::int, $4::int, $5, $6::int, $7 WHERE $12::bool
     ), moved AS (
       UPDATE webhook_deliveries
          SET status = $8, attempts = $3::int, next_attempt_at = $9::timestamptz,
              locked_until = NULL, claims = 0, last_status_code = $4::int, last_error = $5,
              updated_at = now(),
              completed_at = CASE WHEN $10::bool THEN now() ELSE NULL END,
              first_success_at = CASE WHEN $10::bool THEN coalesce(first_success_at, now())
                                      ELSE first_success_at END
        WHERE id = $1 AND round = $2::int AND attempts = $3::int - 1 AND status = 'delivering'
    RETURNING id
     ), counters AS (
       UPDATE webhook_subscriptions s
          SET consecutive_failures = CASE WHEN $10::bool THEN 0 ELSE s.consecutive_failures END,
              last_delivery_at = now(),
              last_success_at = CASE WHEN $10::bool THEN now() ELSE s.last_success_at END,
              last_failure_at = CASE WHEN $10::bool THEN s.last_failure_at ELSE now() END
        WHERE s.id = $11::uuid AND EXISTS (SELECT 1 FROM moved)
          AND CASE WHEN $10::bool
                   THEN s.consecutive_failures <> 0 OR s.last_success_at IS NULL
                        OR s.last_success_at < now() - interval '1 second'
                   ELSE s.last_failure_at IS NULL
                        OR s.last_failure_at < now() - interval '1 second' END
     )
     SELECT (SELECT count(*)::int FROM moved) AS moved FROM async_commit`,
    [
      d.id,
      d.round,
      d.attempts + 1,
      a.statusCode,
      a.error,
      a.durationMs,
      a.excerpt === null ? null : toPgText(a.excerpt),
      success ? 'succeeded' : 'pending',
      outcome.kind === 'retry' ? outcome.nextAttemptAt : null,
      success,
      d.subscriptionId,
      logAttempt,
    ],
  );
  return (rows[0]?.moved ?? 0) > 0;
}

/** What it takes to enqueue a delivery's next attempt: its ids, counters and lanes. */
export type OpenDelivery = Pick<
  Delivery,
  | 'id'
  | 'tenantId'
  | 'subscriptionId'
  | 'receptionistId'
  | 'round'
  | 'attempts'
  | 'claims'
  | 'nextAttemptAt'
>;
const OPEN_COLUMNS =
  'id, tenant_id, subscription_id, receptionist_id, round, attempts, claims, next_attempt_at';

/**
 * Fans one event out in one statement: marks it fanned out (only the first caller does),
 * creates a delivery per active subscription of its tenant whose filter matches (empty
 * filter = all) and one for its receptionist's legacy webhook_url, and returns every open
 * delivery of the event: the new ones, or on a re-run the ones still open. Unique indexes
 * on (target, event) make a re-run create nothing new.
 */
export async function fanOutEvent(db: Knex, eventId: string): Promise<OpenDelivery[]> {
  const rows = await runPrepared<
    Pick<
      DeliveryRow,
      | 'id'
      | 'tenant_id'
      | 'subscription_id'
      | 'receptionist_id'
      | 'round'
      | 'attempts'
      | 'claims'
      | 'next_attempt_at'
    >
  >(
    db,
    'sb_fan_out_event',
    `WITH ${ASYNC_COMMIT_CTE}, ev AS (
       UPDATE events SET fanned_out_at = now()
         FROM async_commit
        WHERE id = $1 AND fanned_out_at IS NULL
    RETURNING id, tenant_id, receptionist_id, type
     ), to_subscriptions AS (
       INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, next_attempt_at)
       SELECT 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ev.tenant_id, ev.id, s.id, now()
         FROM ev JOIN webhook_subscriptions s
           ON s.tenant_id = ev.tenant_id AND s.is_active
          AND (s.events = '{}' OR ev.type = ANY (s.events))
       ON CONFLICT DO NOTHING
    RETURNING ${OPEN_COLUMNS}
     ), to_legacy AS (
       INSERT INTO webhook_deliveries (id, tenant_id, event_id, receptionist_id, next_attempt_at)
       SELECT 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ev.tenant_id, ev.id, r.id, now()
         FROM ev JOIN receptionists r ON r.id = ev.receptionist_id AND r.webhook_url IS NOT NULL
       ON CONFLICT DO NOTHING
    RETURNING ${OPEN_COLUMNS}
     )
     SELECT ${OPEN_COLUMNS} FROM to_subscriptions
     UNION ALL SELECT ${OPEN_COLUMNS} FROM to_legacy
     UNION ALL SELECT ${OPEN_COLUMNS} FROM webhook_deliveries
                WHERE event_id = $1 AND status IN ('pending', 'delivering')`,
    [eventId],
  );
  return rows.map((r) => ({
    id: r.id,
    tenantId: r.tenant_id,
    subscriptionId: r.subscription_id,
    receptionistId: r.receptionist_id,
    round: r.round,
    attempts: r.attempts,
    claims: r.claims,
    nextAttemptAt: r.next_attempt_at,
  }));
}
