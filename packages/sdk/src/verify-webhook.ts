import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError, type WebhookVerificationReason } from './errors';
import type { WebhookEvent } from './types';

/** Request headers: Node's `req.headers`, a plain object, or a WHATWG `Headers`. */
export type WebhookHeaders =
  | Readonly<Record<string, string | readonly string[] | undefined>>
  | { get(name: string): string | null };

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the signing time and now, seconds. Default 300. */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (tests). */
  now?: number;
}

const SECRET_PREFIX = 'whsec_';
const TIMESTAMP = /^\d{1,15}$/;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(n: string): string | null }).get(name)?.trim() || undefined;
  }
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return (typeof value === 'string' ? value : value.join(' ')).trim() || undefined;
  }
  return undefined;
}

const fail = (reason: WebhookVerificationReason, message: string): never => {
  throw new WebhookVerificationError(reason, message);
};

/** Equal in constant time for equal lengths; lengths are public (hex or base64 of 32 bytes). */
function same(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

function checkTimestamp(raw: string, options: VerifyWebhookOptions): void {
  if (!TIMESTAMP.test(raw)) fail('invalid_timestamp', 'the timestamp is not Unix seconds');
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(raw)) > (options.toleranceSeconds ?? 300)) {
    fail('timestamp_out_of_tolerance', 'the delivery is too old (or from the future): replayed?');
  }
}

/**
 * `x-service-signature`: hex HMAC-SHA256 keyed with the whole secret over `ts.body`; a
 * comma-separated list while a rotated secret overlaps, any entry passing.
 */
function verifyServiceScheme(
  body: Buffer,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions,
): void {
  const timestamp = header(headers, 'x-service-timestamp');
  const signature = header(headers, 'x-service-signature');
  if (!timestamp || !signature) return fail('missing_header', 'x-service-timestamp missing');
  checkTimestamp(timestamp, options);
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  // During a secret rotation's overlap the header lists two signatures, comma-separated.
  let matched = false;
  for (const entry of signature.toLowerCase().split(',')) {
    // Every entry is compared, so the time taken does not say which one matched.
    if (same(expected, entry.trim())) matched = true;
  }
  if (!matched) {
    fail('invalid_signature', 'x-service-signature does not match: tampered, or another secret');
  }
}

/**
 * Standard Webhooks `webhook-signature`: `v1,` + base64 HMAC-SHA256 keyed with the decoded
 * secret over `id.ts.body`; any matching entry of the space-separated list passes.
 */
function verifyStandardScheme(
  body: Buffer,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions,
): void {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) return fail('missing_header', 'webhook-* headers missing');
  checkTimestamp(timestamp, options);
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!secret.startsWith(SECRET_PREFIX) || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    fail('invalid_secret', 'the secret is not "whsec_" followed by base64');
  }
  // A key object, not the Buffer itself: createHmac wraps a Buffer anew on every call, several
  // times the cost of the HMAC on Node 24. Same bytes, same signature.
  const key = createSecretKey(Buffer.from(encoded, 'base64'));
  const expected = createHmac('sha256', key)
    .update(`${id}.${timestamp}.`)
    .update(body)
    .digest('base64');
  let matched = false;
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    // Every entry is compared, so the time taken does not say which one matched.
    if (version === 'v1' && value !== undefined && same(expected, value)) matched = true;
  }
  if (!matched)
    fail('invalid_signature', 'no webhook-signature matches: tampered, or another secret');
}

/**
 * Verifies a delivery and returns its typed envelope. Pass the raw body exactly as received
 * (e.g. `express.raw({ type: 'application/json' })`): a re-serialised object does not verify.
 * Checks `x-service-signature` when the delivery carries it, else the Standard Webhooks
 * `webhook-signature` (every Switchboard delivery carries both), comparing in constant time
 * and refusing timestamps more than `toleranceSeconds` away from now.
 * @throws WebhookVerificationError when the delivery is tampered, stale or incomplete.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  if (header(headers, 'x-service-signature') !== undefined) {
    verifyServiceScheme(body, headers, secret, options);
  } else {
    verifyStandardScheme(body, headers, secret, options);
  }
  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    return fail('invalid_payload', 'the body is not JSON');
  }
  const e = event as { id?: unknown; event?: unknown };
  if (typeof e?.id !== 'string' || typeof e.event !== 'string') {
    fail('invalid_payload', 'the body is not a Switchboard event envelope');
  }
  return event as WebhookEvent;
}
