/** Unix seconds (decimal string) of the signing moment; the same value as `webhook-timestamp`. */
export const SERVICE_TIMESTAMP_HEADER = 'x-service-timestamp';
/** Lowercase hex HMAC-SHA256 over `timestamp + "." + body`, keyed by the whole secret string. */
export const SERVICE_SIGNATURE_HEADER = 'x-service-signature';
/** The event id: identical on every retry so subscribers can deduplicate. */
export const SERVICE_EVENT_ID_HEADER = 'x-service-event-id';
/** Standard Webhooks message id (= the event id). */
export const STANDARD_ID_HEADER = 'webhook-id';
/** Standard Webhooks timestamp (unix seconds). */
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
/** Standard Webhooks signature list: space-separated `v1,<base64>` entries. */
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';
