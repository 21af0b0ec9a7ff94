import { isIP } from 'node:net';
import { createLogger, type Logger } from '@switchboard/logger';
import { verifyWebhook, type WebhookEvent } from '@switchboard/sdk';
import type { LookupFn } from '@switchboard/webhooks';

/**
 * A resolver for tests: answers from `table` and never touches real DNS. A function entry
 * is called on every lookup (e.g. to answer differently the second time: DNS rebinding).
 * Unknown names fail like getaddrinfo's ENOTFOUND.
 */
export function fakeLookup(table: Record<string, readonly string[] | (() => string[])>): LookupFn {
  return async (hostname) => {
    const entry = table[hostname];
    if (!entry) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    }
    const addresses = typeof entry === 'function' ? entry() : entry;
    return addresses.map((address) => ({ address, family: isIP(address) }));
  };
}

type PlainHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** `headers` without the `x-service-*` scheme: verifyWebhook then checks the Standard Webhooks one. */
export const standardOnly = (headers: PlainHeaders): PlainHeaders =>
  Object.fromEntries(
    Object.entries(headers).filter(([name]) => !name.toLowerCase().startsWith('x-service-')),
  );

/**
 * Verifies a delivery by each of its two signature schemes with the SDK's verifyWebhook, which
 * checks `x-service-signature` when present, else the Standard Webhooks one; returns the
 * envelope. Throws WebhookVerificationError when either fails.
 */
export function verifyBothSchemes(
  body: string,
  headers: PlainHeaders,
  secret: string,
): WebhookEvent {
  verifyWebhook(body, standardOnly(headers), secret);
  return verifyWebhook(body, headers, secret);
}

/** A pino logger (with the production redaction) whose output the test can read. */
export function captureLogger(): { logger: Logger; text(): string } {
  let out = '';
  const logger = createLogger('api', 'info', {
    write: (line: string) => {
      out += line;
    },
  });
  return { logger, text: () => out };
}

/** The read shape's keys (docs/API.md, Webhooks), sorted. */
export const READ_SHAPE_KEYS = [
  'consecutive_failures',
  'created_at',
  'description',
  'disabled_at',
  'disabled_reason',
  'events',
  'failing',
  'id',
  'is_active',
  'last_delivery_at',
  'last_failure_at',
  'last_success_at',
  'livemode',
  'rate_limit_per_second',
  'secret_overlap_ends_at',
  'updated_at',
  'url',
];

export const SIGNING_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
