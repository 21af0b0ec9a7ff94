import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';

/**
 * The fingerprint of a request: sha256 (hex) of the canonical JSON (object keys sorted at
 * every depth) of the operation and its body. The same body sent with its keys in another
 * order is the same request; the same key sent to another operation is a reuse (422), as it
 * is at Stripe, never a second, unrelated response under one key.
 */
export const fingerprintRequest = (operation: string, body: unknown): string =>
  createHash('sha256')
    .update(stableStringify({ operation, body: body ?? null }))
    .digest('hex');
