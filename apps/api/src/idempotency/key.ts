import { createHash } from 'node:crypto';
import { invalidParameter } from '../errors';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** 1 to 255 printable ASCII characters (docs/API.md, Idempotency). */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key, null when absent; anything malformed is a 400 naming it. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !VALID_KEY.test(header)) {
    throw invalidParameter(
      IDEMPOTENCY_HEADER,
      'Idempotency-Key must be 1 to 255 printable ASCII characters',
    );
  }
  return header;
}

/**
 * The Redis key of one tenant's Idempotency-Key. The tenant is part of the key, so two
 * tenants never share an entry; the client's key is hashed, so its length and bytes do not
 * matter to Redis.
 */
export const idempotencyRedisKey = (prefix: string, tenantId: string, key: string): string =>
  `${prefix}:idem:${tenantId}:${createHash('sha256').update(key).digest('hex')}`;
