import { timingSafeEqual } from 'node:crypto';
import {
  type HeaderSource,
  readHeader,
  SERVICE_SIGNATURE_HEADER,
  SERVICE_TIMESTAMP_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
} from './headers';
import { decodeSigningSecret } from './secrets';
import { computeServiceSignature, computeStandardSignature, nowSeconds } from './sign';

/** Why a signature was rejected. */
export type VerificationFailureReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_secret';

/** Thrown by the `verify*` functions; `reason` says which check failed. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: VerificationFailureReason,
    message: string,
  ) {
    super(message);
  }
}

/** Input of the verification functions. */
export interface VerifyInput {
  secret: string;
  /** The raw request body exactly as received (never a re-serialised JSON object). */
  body: string | Buffer;
  headers: HeaderSource;
  /** Allowed clock skew in either direction, seconds. Default 300. */
  toleranceSeconds?: number;
  /** Current time in unix seconds; defaults to the system clock. */
  now?: number;
}

const DEFAULT_TOLERANCE_SECONDS = 300;
const TIMESTAMP = /^\d{1,15}$/;

function fail(reason: VerificationFailureReason, message: string): never {
  throw new WebhookVerificationError(reason, message);
}

function required(headers: HeaderSource, name: string): string {
  const value = readHeader(headers, name)?.trim();
  return value ? value : fail('missing_header', `missing ${name} header`);
}

/** Rejects timestamps outside `now ± tolerance`, which bounds how long a captured request replays. */
function checkTimestamp(raw: string, input: VerifyInput): void {
  if (!TIMESTAMP.test(raw)) fail('invalid_timestamp', 'timestamp is not unix seconds');
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const skew = Math.abs((input.now ?? nowSeconds()) - Number(raw));
  if (!(skew <= tolerance)) fail('timestamp_out_of_tolerance', 'timestamp outside tolerance');
}

/** Constant-time string equality; the length check leaks only the (public) length. */
function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Verifies `x-service-signature` / `x-service-timestamp`.
 * @throws WebhookVerificationError naming the failed check; returns normally when valid.
 */
export function verifyServiceSignature(input: VerifyInput): void {
  const timestamp = required(input.headers, SERVICE_TIMESTAMP_HEADER);
  const signature = required(input.headers, SERVICE_SIGNATURE_HEADER);
  checkTimestamp(timestamp, input);
  const expected = computeServiceSignature(input.secret, timestamp, input.body);
  // A comma-separated list during a secret rotation's overlap: any entry may match. Every
  // entry is compared (no early exit) so timing does not reveal which one matched.
  let matched = false;
  for (const entry of signature.toLowerCase().split(',')) {
    if (safeEqual(expected, entry.trim())) matched = true;
  }
  if (!matched) fail('invalid_signature', 'signature does not match');
}

/**
 * Verifies the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`). Any one matching `v1,` entry in the space-separated list is enough,
 * so a subscriber survives secret rotation; entries of other versions are ignored.
 * @throws WebhookVerificationError naming the failed check; returns normally when valid.
 */
export function verifyStandardWebhook(input: VerifyInput): void {
  const id = required(input.headers, STANDARD_ID_HEADER);
  const timestamp = required(input.headers, STANDARD_TIMESTAMP_HEADER);
  const signatures = required(input.headers, STANDARD_SIGNATURE_HEADER);
  checkTimestamp(timestamp, input);
  let key: Buffer;
  try {
    key = decodeSigningSecret(input.secret);
  } catch {
    return fail('invalid_secret', 'secret is not "whsec_" + base64');
  }
  const expected = computeStandardSignature(key, id, timestamp, input.body);
  // Every entry is compared (no early exit) so timing does not reveal which one matched.
  let matched = false;
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    if (safeEqual(expected, entry.slice(comma + 1))) matched = true;
  }
  if (!matched) fail('invalid_signature', 'no signature matches');
}

function succeeds(check: (input: VerifyInput) => void, input: VerifyInput): boolean {
  try {
    check(input);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}

/** Boolean form of {@link verifyServiceSignature}. */
export function isValidServiceSignature(input: VerifyInput): boolean {
  return succeeds(verifyServiceSignature, input);
}

/** Boolean form of {@link verifyStandardWebhook}. */
export function isValidStandardWebhook(input: VerifyInput): boolean {
  return succeeds(verifyStandardWebhook, input);
}
