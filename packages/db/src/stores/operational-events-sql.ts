import { newTimeOrderedIdSql } from '../ids';

/**
 * SQL pieces of the operational events (webhook.failing, webhook.disabled, webhook.recovered;
 * docs/API.md, Webhooks). They are written by the delivery lifecycle's own statements, in the
 * transaction of the transition they report, with the same row shape `emit()` writes
 * (packages/events): a time-ordered `evt_` id made from the row's `created_at`, account-level
 * (no receptionist), with a row in the outbox for the relay (queuedSql, event-outbox-sql.ts).
 * Each is about one subscription (`data.subscription_id`) and is never delivered to it:
 * fan-out and recovery skip that target. Each has the mode of its subscription (docs/API.md,
 * Test mode).
 */
export const SUBSCRIPTION_EVENT_TYPES = [
  'webhook.failing',
  'webhook.disabled',
  'webhook.recovered',
];

const typeList = SUBSCRIPTION_EVENT_TYPES.map((t) => `'${t}'`).join(', ');

/** The subscription an event `e` is about, or NULL for every other event. */
export const aboutSubscriptionSql = (e: string): string =>
  `CASE WHEN ${e}.type IN (${typeList}) THEN ${e}.data->>'subscription_id' END`;

/** A new event id carrying `now()`, the `created_at` these inserts write (as emit() does). */
export const NEW_EVENT_ID_SQL = newTimeOrderedIdSql('evt');

/** A timestamp as the envelope's ISO 8601 UTC text, to the millisecond. */
export const isoSql = (t: string): string =>
  `to_char(${t} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * RECORD_SQL's insert of webhook.recovered, at the first success of a subscription that sent
 * webhook.failing. Reads its CTEs `locked` (the rows as before the update), `touched` and
 * `counters` (as after it).
 */
export const RECOVERED_INSERT_SQL = `-- webhook.recovered: the first success after webhook.failing (failing_level > 0).
       INSERT INTO events (id, tenant_id, receptionist_id, type, data, created_at,
                           published_at, fanned_out_at, livemode)
       SELECT ${NEW_EVENT_ID_SQL}, l.tenant_id, NULL, 'webhook.recovered',
              jsonb_build_object('subscription_id', l.id::text, 'url', l.url,
                                 'recovered_at', ${isoSql('c.last_success_at')},
                                 'failures_before', l.consecutive_failures),
              now(), now(), now(), l.livemode
         FROM locked l JOIN touched t ON t.id = l.id JOIN counters c ON c.id = l.id
        WHERE t.any_success AND l.failing_level > 0`;

/**
 * EXHAUST_SQL's insert of webhook.failing and webhook.disabled, whose ids list them in that
 * order when one statement makes both (decision 0140). Reads its CTEs
 * `subscription` (the row as before the statement), `counted` (after it) and `canceled`;
 * $4 status code, $5 error, $10 threshold.
 */
export const FAILING_DISABLED_INSERT_SQL = `-- webhook.failing when the streak enters a higher level (each level once per streak),
       -- webhook.disabled when this failure disabled the subscription.
       INSERT INTO events (id, tenant_id, receptionist_id, type, data, created_at,
                           published_at, fanned_out_at, livemode)
       SELECT ${newTimeOrderedIdSql('evt', '1')}, was.tenant_id, NULL, 'webhook.failing',
              jsonb_build_object('subscription_id', was.id::text, 'url', was.url,
                                 'consecutive_failures', c.failures,
                                 'disable_threshold', $10::int,
                                 'last_status_code', $4::int, 'last_error', $5::text),
              now(), now(), now(), was.livemode
         FROM subscription was, counted c WHERE c.failing_level > was.failing_level
       UNION ALL
       SELECT ${newTimeOrderedIdSql('evt', '2')}, was.tenant_id, NULL, 'webhook.disabled',
              jsonb_build_object('subscription_id', was.id::text, 'url', was.url,
                                 'reason', 'consecutive_failures',
                                 'disabled_at', ${isoSql('c.disabled_at')},
                                 'pending_cancelled', (SELECT count(*)::int FROM canceled)),
              now(), now(), now(), was.livemode
         FROM subscription was, counted c WHERE c.disabled_now`;
