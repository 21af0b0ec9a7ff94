import { randomBytes } from 'node:crypto';

/** Every signing secret starts with this prefix (Standard Webhooks / Svix convention). */
export const SIGNING_SECRET_PREFIX = 'whsec_';

/** Number of random bytes behind a generated secret. */
const SECRET_BYTES = 32;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Creates a new subscription signing secret: `whsec_` + base64 of 32 random bytes.
 * The same string keys both signature schemes (see {@link signPayload}).
 */
export function generateSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * Returns the Standard Webhooks HMAC key: the base64-decoded part after `whsec_`.
 * @throws TypeError when the secret lacks the prefix or its tail is not canonical base64;
 *   such a secret can never produce a Standard Webhooks signature a subscriber could check.
 */
export function decodeSigningSecret(secret: string): Buffer {
  if (!secret.startsWith(SIGNING_SECRET_PREFIX)) {
    throw new TypeError(`signing secret must start with "${SIGNING_SECRET_PREFIX}"`);
  }
  const encoded = secret.slice(SIGNING_SECRET_PREFIX.length);
  if (encoded.length === 0 || !BASE64.test(encoded)) {
    throw new TypeError('signing secret must be "whsec_" followed by base64');
  }
  return Buffer.from(encoded, 'base64');
}
