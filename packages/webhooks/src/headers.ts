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

/**
 * Incoming headers as a plain record (Node's `IncomingHttpHeaders`, a parsed JSON object)
 * or anything with a case-insensitive `get` (the WHATWG `Headers` class).
 */
export type HeaderSource =
  | Readonly<Record<string, string | readonly string[] | undefined>>
  | { get(name: string): string | null };

function hasGetter(source: HeaderSource): source is { get(name: string): string | null } {
  return typeof (source as { get?: unknown }).get === 'function';
}

/**
 * Reads one header case-insensitively. Repeated values are joined with a space, which keeps
 * a split `webhook-signature` list intact and makes any other repeated header fail to verify.
 */
export function readHeader(source: HeaderSource, name: string): string | undefined {
  if (hasGetter(source)) {
    return source.get(name) ?? undefined;
  }
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(source)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return typeof value === 'string' ? value : value.join(' ');
  }
  return undefined;
}
