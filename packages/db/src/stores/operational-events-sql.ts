/**
 * SQL pieces of the operational events (webhook.failing, webhook.disabled, webhook.recovered;
 * docs/API.md, Webhooks). They are written by the delivery lifecycle's own statements, in the
 * transaction of the transition they report, with the same row shape `emit()` writes
 * (packages/events): an `evt_` id of 128 random bits, account-level (no receptionist), left
 * for the relay (published_at NULL). Each is about one subscription (`data.subscription_id`)
 * and is never delivered to it: fan-out and recovery skip that target.
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

/** A new event id, as newId('evt') makes it. */
export const NEW_EVENT_ID_SQL = `'evt_' || replace(gen_random_uuid()::text, '-', '')`;

/** A timestamp as the envelope's ISO 8601 UTC text, to the millisecond. */
export const isoSql = (t: string): string =>
  `to_char(${t} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The outbox channel (OUTBOX_CHANNEL in packages/events) the relay listens on. */
export const OUTBOX_NOTIFY_SQL = `pg_notify('switchboard_outbox', '')`;
