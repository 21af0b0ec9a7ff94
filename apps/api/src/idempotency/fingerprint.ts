import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';

/**
 * The fingerprint of a request body: sha256 (hex) of its canonical JSON (object keys sorted
 * at every depth), so the same body sent with its keys in another order is the same request.
 */
export const fingerprintBody = (body: unknown): string =>
  createHash('sha256')
    .update(stableStringify(body ?? null))
    .digest('hex');
