/**
 * What Redis holds under one Idempotency-Key: a short-lived marker while the first request
 * runs, then the response it produced. Both carry the fingerprint of the body that used the
 * key, so a reuse with another body is recognised in either state.
 */
export type IdempotencyEntry =
  | { state: 'in_progress'; fingerprint: string; owner: string }
  | {
      state: 'done';
      fingerprint: string;
      status: number;
      body: unknown;
      location: string | null;
    };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** Parses a stored entry; null for anything that is not one (treated as absent). */
export function parseEntry(raw: string): IdempotencyEntry | null {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isObject(v) || typeof v.fingerprint !== 'string') return null;
  if (v.state === 'in_progress' && typeof v.owner === 'string') {
    return { state: 'in_progress', fingerprint: v.fingerprint, owner: v.owner };
  }
  if (
    v.state === 'done' &&
    Number.isInteger(v.status) &&
    (v.location === null || typeof v.location === 'string')
  ) {
    return {
      state: 'done',
      fingerprint: v.fingerprint,
      status: v.status as number,
      body: v.body,
      location: v.location as string | null,
    };
  }
  return null;
}
