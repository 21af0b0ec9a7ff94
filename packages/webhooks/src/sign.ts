import { createHmac, createSecretKey } from 'node:crypto';
import {
  SERVICE_EVENT_ID_HEADER,
  SERVICE_SIGNATURE_HEADER,
  SERVICE_TIMESTAMP_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
} from './headers';
import { decodeSigningSecret } from './secrets';

/** Input of {@link signPayload}. */
export interface SignPayloadInput {
  /** The subscription's `whsec_…` secret. */
  secret: string;
  /** Event id (`evt_…`); becomes both `x-service-event-id` and `webhook-id`. */
  eventId: string;
  /** The exact bytes that will be sent, as a string. Re-serialising would break the signature. */
  body: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
  /**
   * The secret before a rotation, while its overlap lasts: the delivery then carries two
   * signatures per scheme, newest (`secret`) first.
   */
  previousSecret?: string | null;
}

/**
 * Headers carrying both signature schemes; spread them into the outgoing request. A type
 * alias (not an interface) so it is assignable to plain header records.
 */
export type SignedHeaders = {
  [SERVICE_TIMESTAMP_HEADER]: string;
  [SERVICE_SIGNATURE_HEADER]: string;
  [SERVICE_EVENT_ID_HEADER]: string;
  [STANDARD_ID_HEADER]: string;
  [STANDARD_TIMESTAMP_HEADER]: string;
  [STANDARD_SIGNATURE_HEADER]: string;
};

/** Header values travel verbatim: visible ASCII only, so nothing can smuggle CR/LF. */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/** Current time in unix seconds. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * `x-service-signature`: lowercase hex HMAC-SHA256 keyed by the whole secret string (UTF-8,
 * `whsec_` prefix included) over `timestamp + "." + body`.
 */
export function computeServiceSignature(
  secret: string,
  timestamp: string,
  body: string | Buffer,
): string {
  // A string key is its UTF-8 bytes. Handed a Buffer instead, createHmac wraps it in a key
  // object of its own on every call, several times the cost of the HMAC on Node 24.
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest('hex');
}

/**
 * Standard Webhooks `v1` signature (base64, without the `v1,` prefix): HMAC-SHA256 keyed by
 * the base64-decoded secret over `id + "." + timestamp + "." + body`.
 */
export function computeStandardSignature(
  key: Buffer,
  id: string,
  timestamp: string,
  body: string | Buffer,
): string {
  // The same bytes as a secret key object: cheaper than handing createHmac the Buffer
  // (see computeServiceSignature).
  return createHmac('sha256', createSecretKey(key))
    .update(`${id}.${timestamp}.`, 'utf8')
    .update(body)
    .digest('base64');
}

/**
 * Signs one delivery with both schemes. Call it once per attempt (the timestamp is part of
 * the signature); the event id stays the same across attempts.
 * @throws TypeError for a malformed secret or an event id that is not visible ASCII.
 * @throws RangeError for a timestamp that is not a non-negative integer.
 */
export function signPayload(input: SignPayloadInput): SignedHeaders {
  const { secret, eventId, body } = input;
  const timestamp = input.timestamp ?? nowSeconds();
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError('timestamp must be a non-negative integer of unix seconds');
  }
  if (!HEADER_SAFE.test(eventId)) {
    throw new TypeError('eventId must be non-empty visible ASCII');
  }
  const secrets = input.previousSecret ? [secret, input.previousSecret] : [secret];
  const keys = secrets.map(decodeSigningSecret);
  const ts = String(timestamp);
  return {
    [SERVICE_TIMESTAMP_HEADER]: ts,
    // Comma-separated: hex never contains one.
    [SERVICE_SIGNATURE_HEADER]: secrets.map((s) => computeServiceSignature(s, ts, body)).join(','),
    [SERVICE_EVENT_ID_HEADER]: eventId,
    [STANDARD_ID_HEADER]: eventId,
    [STANDARD_TIMESTAMP_HEADER]: ts,
    // Space-separated `v1,` entries, as Standard Webhooks specifies.
    [STANDARD_SIGNATURE_HEADER]: keys
      .map((k) => `v1,${computeStandardSignature(k, eventId, ts, body)}`)
      .join(' '),
  };
}
