import { createHash } from 'node:crypto';
import { invalidParameter } from '../errors';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** 1 to 255 printable ASCII characters (docs/API.md, Idempotency). */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/**
 * What a test-mode key's Idempotency-Key is stored under: a prefix no client key can have (a
 * tab is not printable), so the keys of the two modes never meet, in Redis or in the
 * (tenant_id, idempotency_key) backstops (docs/API.md, Test mode).
 */
const TEST_MODE_KEY_PREFIX = 'test\t';

/**
 * The request's Idempotency-Key as stored (a test-mode key's under its own prefix), null
 * when absent; anything malformed is a 400 naming it.
 */
export function parseIdempotencyKey(
  header: string | string[] | undefined,
  livemode = true,
): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !VALID_KEY.test(header)) {
    throw invalidParameter(
      IDEMPOTENCY_HEADER,
      'Idempotency-Key must be 1 to 255 printable ASCII characters',
    );
  }
  return livemode ? header : `${TEST_MODE_KEY_PREFIX}${header}`;
}

/**
 * The Redis key of one tenant's Idempotency-Key. The tenant is part of the key, so two
 * tenants never share an entry; the client's key is hashed, so its length and bytes do not
 * matter to Redis.
 */
export const idempotencyRedisKey = (prefix: string, tenantId: string, key: string): string =>
  `${prefix}:idem:${tenantId}:${createHash('sha256').update(key).digest('hex')}`;
