import { ASYNC_COMMIT_CTE } from '../commit';
import { idTimeBoundsSql } from '../ids';
import type { DeliveryRow } from './deliveries-store';
import { FAILING_DISABLED_INSERT_SQL, RECOVERED_INSERT_SQL } from './operational-events-sql';
import { QUEUED_COLUMNS, queuedSql } from './event-outbox-sql';
import { streamedSql } from './event-stream-notify';
import { SUBSCRIPTION_EXHAUST_CTE, SUBSCRIPTION_RECORD_CTES } from './subscription-lifecycle';

/**
 * The statements of the delivery lifecycle's hot transitions (see delivery-lifecycle.ts).
 * Each takes arrays, one element per delivery of the batch, and reads or writes several
 * tables at once on purpose (data-modifying CTEs): one round trip and one commit per batch.
 * What RECORD_SQL and EXHAUST_SQL do to a subscription is the subscription lifecycle's SQL
 * (SUBSCRIPTION_RECORD_CTES, SUBSCRIPTION_EXHAUST_CTE in subscription-lifecycle.ts).
 */

export const OPEN_COLUMNS =
  'id, tenant_id, event_id, subscription_id, receptionist_id, round, attempts, claims, next_attempt_at';

export type OpenRow = Pick<
  DeliveryRow,
  | 'id'
  | 'tenant_id'
  | 'event_id'
  | 'subscription_id'
  | 'receptionist_id'
  | 'round'
  | 'attempts'
  | 'claims'
  | 'next_attempt_at'
>;

export interface ClaimRow extends DeliveryRow {
  /** Read as JSON: `created_at` is an ISO 8601 string. */
  event: {
    type: string;
    data: Record<string, unknown>;
    created_at: string;
    receptionist_id: string | null;
    traceparent: string | null;
    livemode: boolean;
  } | null;
  subscription: {
    url: string;
    is_active: boolean;
    disabled_reason: string | null;
    tenant_id: string;
    ciphertext: string;
    /** The previous secret while its overlap lasts, else null. */
    previous_ciphertext: string | null;
    rate_limit_per_second: number | null;
  } | null;
}

/** SQL: the subscriptions (alias `s`) that take event `ev` (columns as PUBLISH_NEXT_SQL's `ev`). */
export const SUBSCRIPTION_TAKES_SQL = (ev: string): string =>
  `s.tenant_id = ${ev}.tenant_id AND (s.is_active OR s.disabled_reason = 'manual')
          -- A subscription takes the events of its own mode (docs/API.md, Test mode).
          AND s.livemode = ${ev}.livemode
          AND (s.events = '{}' OR ${ev}.type = ANY (s.events))
          -- An operational event never goes to the subscription it is about.
          AND (${ev}.about IS NULL OR ${ev}.about <> s.id::text)`;
/** SQL: the receptionist (alias `r`) whose legacy webhook_url takes event `ev` (live only). */
export const LEGACY_TAKES_SQL = (ev: string): string =>
  `r.id = ${ev}.receptionist_id AND r.webhook_url IS NOT NULL AND ${ev}.livemode`;

/** A claimed delivery's event (alias `e`), as ClaimRow['event'] reads it. */
export const EVENT_JSON = `json_build_object('type', e.type, 'data', e.data, 'created_at', e.created_at,
                                      'receptionist_id', e.receptionist_id,
                                      'traceparent', e.traceparent, 'livemode', e.livemode)`;

/** The columns of a delivery row that a claim returns (ClaimRow). */
export const DELIVERY_COLUMNS = `id, tenant_id, event_id, subscription_id, receptionist_id, status, attempts,
       round, next_attempt_at, locked_until, last_status_code, last_error, created_at, updated_at,
       completed_at, first_success_at, claims`;

/** A claimed delivery's subscription (its row alias `d`), as ClaimRow['subscription'] reads it. */
export const SUBSCRIPTION_JSON = `(SELECT json_build_object('url', s.url, 'is_active', s.is_active,
                                      'disabled_reason', s.disabled_reason,
                                      'tenant_id', s.tenant_id, 'ciphertext', s.secret_ciphertext,
                                      'previous_ciphertext',
                                      CASE WHEN s.secret_overlap_ends_at > now()
                                           THEN s.previous_secret_ciphertext END,
                                      'rate_limit_per_second', s.rate_limit_per_second)
               FROM webhook_subscriptions s WHERE s.id = d.subscription_id)`;

/**
 * What a claim returns of each delivery (alias `d`): the row, its event, its target. `from`
 * and `to` are the parameters bounding the events' created_at.
 */
const claimedFields = (from: string, to: string): string =>
  `${DELIVERY_COLUMNS.split(/,\s*/)
    .map((c) => `d.${c}`)
    .join(', ')},
            (SELECT ${EVENT_JSON} FROM events e
              WHERE e.id = d.event_id
                AND e.created_at BETWEEN d.created_at - interval '1 day'
                                     AND d.created_at + interval '1 hour'
                AND e.created_at >= ${from}::timestamptz AND e.created_at < ${to}::timestamptz) AS event,
            ${SUBSCRIPTION_JSON} AS subscription`;

/**
 * $1 delivery ids, $2 rounds, $3 attempts made so far, $4 lock seconds, $5 and $6 bounds on
 * the deliveries' created_at (idTimeWindow of $1), $7 and $8 the same widened by a day below
 * and an hour above (the events'). The bounds are plain parameters so that Postgres plans
 * only the days they cover; the per-row bounds stay exact. The event and the subscription
 * are read per claimed row (subqueries by primary key), never joined: a join may be planned
 * as a scan of every event, once per batch.
 *
 * The event is looked for within a day before its delivery and an hour after (as
 * eventOfDelivery looks first): it is committed before its deliveries are made. Where it is
 * not there (a fan-out delayed over a day, an application clock ahead of Postgres' by over
 * an hour), `event` is null and CLAIM_EVENTS_SQL finds it by id, in a statement of its own:
 * a fallback in this one would be planned over every day kept, for every batch.
 */
export const CLAIM_SQL = `WITH ${ASYNC_COMMIT_CTE}, req AS (
       SELECT * FROM unnest($1::text[], $2::int[], $3::int[]) AS r(id, round, attempts)
     )
     UPDATE webhook_deliveries d
        SET status = 'delivering', locked_until = now() + make_interval(secs => $4::float8),
            claims = d.claims + 1, updated_at = now()
       FROM req, async_commit
      WHERE d.id = req.id AND d.id = ANY ($1::text[])
        AND ${idTimeBoundsSql('req.id', 'd.created_at')}
        AND d.created_at >= $5::timestamptz AND d.created_at < $6::timestamptz
        AND d.round = req.round AND d.attempts = req.attempts
        -- IS TRUE (the same rows): not a predicate the planner may match to the partial
        -- index of open deliveries, which a plan made without statistics read whole.
        AND (d.status = 'pending' OR (d.status = 'delivering' AND d.locked_until < now())) IS TRUE
  RETURNING ${claimedFields('$7', '$8')}`;

/**
 * (knex bindings) event ids, then bounds on their created_at (idTimeWindow of the ids): the
 * events of claimed deliveries that CLAIM_SQL did not find near their deliveries.
 */
export const CLAIM_EVENTS_SQL = `SELECT e.id, ${EVENT_JSON} AS event FROM events e
  WHERE e.id = ANY (?::text[]) AND e.created_at >= ?::timestamptz AND e.created_at < ?::timestamptz`;

/**
 * A delivery's latest logged attempt, kept on its row (migration 096): the columns, and the
 * values of the attempt each takes (one SQL expression each).
 */
const LATEST_FIELDS = [
  'round',
  'attempt',
  'status_code',
  'error',
  'duration_ms',
  'response_excerpt',
  'attempted_at',
  'request_headers',
  'response_headers',
] as const;
type LatestValues = Record<(typeof LATEST_FIELDS)[number], string>;

/** SET clauses: the latest attempt becomes `values` where `logged`, else stays (`row`.latest_*). */
const setLatestSql = (row: string, logged: string, values: LatestValues): string =>
  LATEST_FIELDS.map(
    (f) => `latest_${f} = CASE WHEN ${logged} THEN ${values[f]} ELSE ${row}latest_${f} END`,
  ).join(',\n              ');

/** The latest attempt as read from `row` (before the update), as `was_<field>` columns. */
const wasLatestSql = (row: string): string =>
  LATEST_FIELDS.map((f) => `${row}.latest_${f} AS was_${f}`).join(', ');

/** The INSERT of attempt rows, for a SELECT of values in this column order. */
const INSERT_ATTEMPT_ROWS = `INSERT INTO webhook_delivery_attempts
              (delivery_id, ${LATEST_FIELDS.join(', ')})`;

/** Selects a superseded latest attempt (the `was_` columns of `src`) as an attempt row. */
const supersededSql = (src: string): string =>
  `SELECT ${src}.id, ${LATEST_FIELDS.map((f) => `${src}.was_${f}`).join(', ')}`;

/**
 * Where attempts are kept (docs/decisions/0077-latest-attempt-on-the-delivery-row.md): a delivery's
 * latest logged attempt is on its row (`latest_*`), and an attempt gets a row of its own only once
 * a later logged attempt of the delivery takes its place: the statement that records the new one
 * inserts the one it supersedes, as it was. A delivery that succeeds at its first attempt writes no
 * attempt row. `webhook_delivery_attempts_all` lists both.
 *
 * The superseded attempt is read from the statement's snapshot (`cur`) and the update only
 * proceeds if the row still holds that one (`latest_round` and `latest_attempt` unchanged,
 * re-checked on the row's newest version): a latest attempt is never overwritten unlisted.
 * Only a record of this delivery, round and attempt changes those columns, and it also moves
 * `attempts`, which the update checks anyway, so the check refuses nothing that would pass.
 *
 * An attempt that moves no delivery (a new round superseded it while it was in flight, or
 * its delivery is gone) is kept as a row of its own, as every attempt used to be, unless its
 * delivery's newest version already holds it as its latest (`holder`, a locking read: the
 * same attempt recorded twice, by a claim that lapsed and was redone, is listed once; a
 * duplicate row is refused by the uniqueness trigger, as before). `ids` (the statement's ids as
 * an array) lets `holder` read the key by id whatever the statistics (as RECORD_SQL's update).
 */
const keptSql = (from: string, to: string, ids: string): string => `stale AS (
       SELECT i.* FROM input i
        WHERE i.log_attempt AND NOT EXISTS (SELECT 1 FROM updated u WHERE u.id = i.id)
     ), holder AS (
       SELECT d.id, d.latest_round, d.latest_attempt
         FROM webhook_deliveries d JOIN stale s ON d.id = s.id
        WHERE d.id = ANY (${ids}) AND ${idTimeBoundsSql('s.id', 'd.created_at')}
          AND d.created_at >= ${from}::timestamptz AND d.created_at < ${to}::timestamptz
          FOR SHARE OF d
     ), attempt AS (
       ${INSERT_ATTEMPT_ROWS}
       ${supersededSql('u')} FROM updated u WHERE u.log_attempt AND u.was_attempt IS NOT NULL
       UNION ALL
       SELECT s.id, s.round, s.attempt, s.status_code, s.error, s.duration_ms, s.excerpt, now(),
              s.request_headers::jsonb, s.response_headers::jsonb
         FROM stale s
        WHERE NOT EXISTS (SELECT 1 FROM holder h WHERE h.id = s.id AND h.latest_round = s.round
                                                    AND h.latest_attempt = s.attempt)
     )`;

/** The update's check that the row still holds the latest attempt read into `i` (`cur`). */
const sameLatestSql = (row: string): string =>
  `${row}latest_round IS NOT DISTINCT FROM i.was_round
          AND ${row}latest_attempt IS NOT DISTINCT FROM i.was_attempt`;

/**
 * An attempt whose delivery was canceled while it was in flight (its subscription disabled
 * or its target gone) is still counted on the delivery (the `updated` statement): `attempts`
 * always equals the attempts listed for the round (rows and latest) and the POSTs sent. The
 * delivery stays canceled.
 *
 * $1 ids, $2 rounds, $3 attempt numbers, $4 status codes, $5 errors, $6 durations,
 * $7 excerpts, $8 succeeded, $9 next attempt times, $10 subscription ids, $11 log attempt,
 * $12 request headers, $13 response headers (JSON text), $14 and $15 bounds on the
 * deliveries' created_at (idTimeWindow of $1: Postgres plans only the days they cover).
 * Attempts are kept as keptSql says.
 *
 * The first attempt of round 1 supersedes nothing, so `cur` does not look its delivery up
 * (the common case: most deliveries succeed at once). The update needs `attempts = 0` in
 * round 1, and a row there holds no latest attempt: only this statement and EXHAUST_SQL set
 * `latest_*`, in the update that moves `attempts` to the attempt (1 or more) within the
 * row's round, and `attempts` only goes back to 0 with `round + 1` (newRound, a recovery).
 * The lookup is a LATERAL subquery kept apart (`OFFSET 0`: not pulled up into a join) so
 * that the test, on the outer row alone, is a one-time filter above its index scan, which
 * then does not run for those rows (LEFT joined: they get NULL `was_*`). Were a latest there after all, the update's check
 * against `was_*` (NULL) would refuse it and the attempt would be kept as a row: never lost.
 */
export const RECORD_SQL = `WITH ${ASYNC_COMMIT_CTE}, input AS (
       SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::text[], $6::int[],
                            $7::text[], $8::bool[], $9::timestamptz[], $10::uuid[], $11::bool[],
                            $12::text[], $13::text[])
           AS t(id, round, attempt, status_code, error, duration_ms, excerpt, success, next_at,
                subscription_id, log_attempt, request_headers, response_headers)
     ), cur AS (
       SELECT i.*, w.*
         FROM input i LEFT JOIN LATERAL (
              SELECT ${wasLatestSql('d')} FROM webhook_deliveries d
               WHERE d.id = i.id AND ${idTimeBoundsSql('i.id', 'd.created_at')}
                 AND d.created_at >= $14::timestamptz AND d.created_at < $15::timestamptz
                 -- Round 1, attempt 1 supersedes nothing: not looked up (see above).
                 AND (i.round > 1 OR i.attempt > 1)
              OFFSET 0) w ON true
     ), updated AS (
       -- One UPDATE for both cases, never two: a cancel that commits while this statement
       -- waits for the row is re-checked against the row's new version (status canceled
       -- still matches), where two UPDATEs that each test one status would both miss it.
       UPDATE webhook_deliveries d
          SET status = CASE WHEN d.status = 'canceled' THEN 'canceled'
                            WHEN i.success THEN 'succeeded' ELSE 'pending' END,
              attempts = i.attempt, last_status_code = i.status_code, last_error = i.error,
              updated_at = now(),
              next_attempt_at = CASE WHEN d.status = 'canceled' THEN d.next_attempt_at
                                     ELSE i.next_at END,
              locked_until = CASE WHEN d.status = 'canceled' THEN d.locked_until END,
              claims = CASE WHEN d.status = 'canceled' THEN d.claims ELSE 0 END,
              completed_at = CASE WHEN d.status = 'canceled' THEN d.completed_at
                                  WHEN i.success THEN now() END,
              first_success_at = CASE WHEN d.status <> 'canceled' AND i.success
                                      THEN coalesce(d.first_success_at, now())
                                      ELSE d.first_success_at END,
              ${setLatestSql('d.', 'i.log_attempt', {
                round: 'i.round',
                attempt: 'i.attempt',
                status_code: 'i.status_code',
                error: 'i.error',
                duration_ms: 'i.duration_ms',
                response_excerpt: 'i.excerpt',
                attempted_at: 'now()',
                request_headers: 'i.request_headers::jsonb',
                response_headers: 'i.response_headers::jsonb',
              })}
         FROM cur i
        -- d.id = ANY ($1) besides the join: the key is read by id whatever the statistics
        -- were when the plan was made (a generic plan); without it a plan made while the day's
        -- partition was new read the key's second column over the batch's whole window.
        WHERE d.id = i.id AND d.id = ANY ($1::text[])
          AND ${idTimeBoundsSql('i.id', 'd.created_at')}
          AND d.created_at >= $14::timestamptz AND d.created_at < $15::timestamptz
          AND d.round = i.round AND d.attempts = i.attempt - 1
          -- Every attempt is claimed: its row is being delivered (or was canceled meanwhile).
          AND d.status IN ('canceled', 'delivering')
          AND ${sameLatestSql('d.')}
    RETURNING d.id, i.subscription_id, i.success, d.status <> 'canceled' AS moved,
              i.log_attempt, ${LATEST_FIELDS.map((f) => `i.was_${f}`).join(', ')}
     ), ${keptSql('$14', '$15', '$1::text[]')}, moved AS (
       SELECT id, subscription_id, success FROM updated WHERE moved
     ), touched AS (
       SELECT subscription_id AS id, bool_or(success) AS any_success,
              bool_or(NOT success) AS any_failure
         FROM moved WHERE subscription_id IS NOT NULL GROUP BY subscription_id
     ), ${SUBSCRIPTION_RECORD_CTES}, recovered AS (
${RECOVERED_INSERT_SQL}
    RETURNING ${QUEUED_COLUMNS}
     ), ${queuedSql('recovered')}, ${streamedSql('recovered')}
     SELECT (SELECT array_agg(id) FROM moved) AS moved,
            (SELECT count(*)::int FROM notified) AS notified,
            (SELECT count(*)::int FROM streamed) AS streamed
       FROM async_commit`;

/**
 * $1 id, $2 round, $3 attempt number, $4 status code, $5 error, $6 duration, $7 excerpt,
 * $8 subscription id, $9 log attempt, $10 disable after, $11 request headers, $12 response
 * headers (JSON text), $13 and $14 bounds on the delivery's created_at (idTimeWindow of $1,
 * as in RECORD_SQL). The subscription row is locked
 * first (before the delivery row is touched), so exhaustions of one subscription run one
 * after the other and never deadlock on each other's deliveries; the streak is computed from
 * the row's current value (a locking read returns the latest version). `disabled_now` compares
 * with the row as it was before this statement, never with a timestamp (`disabled_at` is
 * stored to the millisecond, `now()` is not). A delivery canceled meanwhile (the exhaustion
 * before disabled the subscription) does not move and does not count in the streak, but its
 * attempt does count on the delivery (as in RECORD_SQL). Attempts are kept as keptSql says.
 */
export const EXHAUST_SQL = `WITH ${ASYNC_COMMIT_CTE}, subscription AS (
       SELECT id, tenant_id, url, is_active, consecutive_failures, failing_level, livemode
         FROM webhook_subscriptions WHERE id = $8::uuid FOR NO KEY UPDATE
     ), input AS (
       SELECT $1::text AS id, $2::int AS round, $3::int AS attempt, $4::int AS status_code,
              $5::text AS error, $6::int AS duration_ms, $7::text AS excerpt,
              $9::bool AS log_attempt, $11::text AS request_headers,
              $12::text AS response_headers
     ), cur AS (
       SELECT i.*, ${wasLatestSql('d')}
         FROM input i JOIN webhook_deliveries d ON d.id = i.id
        WHERE ${idTimeBoundsSql('i.id', 'd.created_at')}
          AND d.created_at >= $13::timestamptz AND d.created_at < $14::timestamptz
     ), updated AS (
       -- One UPDATE for both cases (see RECORD_SQL): 'delivering' fails, 'canceled' only
       -- counts the attempt.
       UPDATE webhook_deliveries d
          SET status = CASE WHEN d.status = 'canceled' THEN 'canceled' ELSE 'failed' END,
              attempts = $3::int, last_status_code = $4::int, last_error = $5, updated_at = now(),
              next_attempt_at = CASE WHEN d.status = 'canceled' THEN d.next_attempt_at END,
              locked_until = CASE WHEN d.status = 'canceled' THEN d.locked_until END,
              claims = CASE WHEN d.status = 'canceled' THEN d.claims ELSE 0 END,
              completed_at = CASE WHEN d.status = 'canceled' THEN d.completed_at ELSE now() END,
              ${setLatestSql('d.', '$9::bool', {
                round: '$2::int',
                attempt: '$3::int',
                status_code: '$4::int',
                error: '$5',
                duration_ms: '$6::int',
                response_excerpt: '$7',
                attempted_at: 'now()',
                request_headers: '$11::jsonb',
                response_headers: '$12::jsonb',
              })}
         FROM cur i
        WHERE d.id = i.id AND ${idTimeBoundsSql('i.id', 'd.created_at')}
          AND d.created_at >= $13::timestamptz AND d.created_at < $14::timestamptz
          AND d.round = $2::int AND d.attempts = $3::int - 1
          AND (d.status = 'canceled'
               OR (d.status = 'delivering'
                   AND ($8::uuid IS NULL OR EXISTS (SELECT 1 FROM subscription))))
          AND ${sameLatestSql('d.')}
    RETURNING d.id, d.status <> 'canceled' AS moved,
              i.log_attempt, ${LATEST_FIELDS.map((f) => `i.was_${f}`).join(', ')}
     ), ${keptSql('$13', '$14', 'ARRAY[$1::text]')}, moved AS (
       SELECT id FROM updated WHERE moved
     ), ${SUBSCRIPTION_EXHAUST_CTE}, canceled AS (
       UPDATE webhook_deliveries
          SET status = 'canceled', locked_until = NULL, completed_at = now(), updated_at = now()
        WHERE subscription_id = $8::uuid AND id <> $1 AND status IN ('pending', 'delivering')
          AND EXISTS (SELECT 1 FROM counted WHERE disabled_now)
    RETURNING id
     ), operational AS (
${FAILING_DISABLED_INSERT_SQL}
    RETURNING ${QUEUED_COLUMNS}
     ), ${queuedSql('operational')}, ${streamedSql('operational')}
     SELECT (SELECT count(*)::int FROM moved) AS moved,
            (SELECT failures FROM counted) AS failures,
            (SELECT disabled_now FROM counted) AS disabled_now,
            (SELECT count(*)::int FROM canceled) AS canceled,
            (SELECT count(*)::int FROM notified) AS notified,
            (SELECT count(*)::int FROM streamed) AS streamed
       FROM async_commit`;
