import { createHmac, timingSafeEqual } from 'node:crypto';

/** The unix seconds the carrier signed at (header names as Node gives them, lower case). */
export const CARRIER_TIMESTAMP_HEADER = 'x-carrier-timestamp';
/** Lowercase hex HMAC-SHA256; several, comma-separated, when the carrier signs with two. */
export const CARRIER_SIGNATURE_HEADER = 'x-carrier-signature';
/** How far a signature's timestamp may be from this process's clock, either way. */
export const CARRIER_SIGNATURE_TOLERANCE_SEC = 300;

/**
 * The message types a carrier reports, which need its signature once SMS_CARRIER_SIGNING_SECRET
 * is set (docs/TELEPHONY.md, Who may report what). Call messages come from the voice
 * platform and stay under INGEST_TOKEN alone.
 */
export const CARRIER_SIGNED_TYPES: ReadonlySet<string> = new Set(['sms.inbound', 'sms.status']);

/**
 * The signature of one message: lowercase hex HMAC-SHA256 keyed by the secret string (UTF-8)
 * over `timestamp + "." + body`, the body's exact bytes (the scheme of our own webhooks'
 * `x-service-signature`, so a carrier adapter signs the way our subscribers verify).
 */
export function computeCarrierSignature(
  secret: string,
  timestamp: string,
  body: string | Buffer,
): string {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest('hex');
}

/** The two headers of a signed message (a carrier adapter's side; tests, the demo script). */
export function signCarrierMessage(
  secret: string,
  body: string | Buffer,
  timestamp: number = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const ts = String(timestamp);
  return {
    [CARRIER_TIMESTAMP_HEADER]: ts,
    [CARRIER_SIGNATURE_HEADER]: computeCarrierSignature(secret, ts, body),
  };
}

export type CarrierSignatureCheck = { ok: true } | { ok: false; reason: string };

const TIMESTAMP = /^[0-9]{1,12}$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * Whether `body` carries a valid signature of one of `secrets` (more than one while a secret
 * is being replaced), made within the tolerance of `nowSec`. Each comparison is
 * constant-time; the reason names what is wrong, never a secret or an expected value.
 */
export function verifyCarrierSignature(
  secrets: readonly string[],
  headers: { timestamp: unknown; signature: unknown },
  body: Buffer,
  nowSec: number = Math.floor(Date.now() / 1000),
): CarrierSignatureCheck {
  const { timestamp, signature } = headers;
  if (typeof timestamp !== 'string' || typeof signature !== 'string') {
    return { ok: false, reason: 'X-Carrier-Timestamp and X-Carrier-Signature are required' };
  }
  if (
    !TIMESTAMP.test(timestamp) ||
    Math.abs(nowSec - Number(timestamp)) > CARRIER_SIGNATURE_TOLERANCE_SEC
  ) {
    return {
      ok: false,
      reason: `X-Carrier-Timestamp must be unix seconds within ${CARRIER_SIGNATURE_TOLERANCE_SEC} s of now`,
    };
  }
  const given = signature
    .split(',')
    .map((s) => s.trim())
    .filter((s) => HEX_SHA256.test(s))
    .map((s) => Buffer.from(s, 'hex'));
  for (const secret of secrets) {
    const expected = Buffer.from(computeCarrierSignature(secret, timestamp, body), 'hex');
    if (given.some((g) => timingSafeEqual(g, expected))) return { ok: true };
  }
  return { ok: false, reason: 'X-Carrier-Signature does not match this body and timestamp' };
}
