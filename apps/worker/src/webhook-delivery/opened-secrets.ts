import type { SecretBox } from '@switchboard/crypto';

/** Secrets opened per process, at most this many (the oldest opened is forgotten first). */
const MAX_OPENED = 10_000;

const opened = new WeakMap<SecretBox, Map<string, string>>();

/**
 * `secretBox.decrypt(token, context)`, opened once per process: every attempt to a
 * subscription signs with the same sealed secret, and AES-GCM opening it was a few per cent
 * of a worker's time per attempt. Invariant: a hit returns exactly what `decrypt` would. The
 * memo is keyed by the token and its context together (a token only opens under its own
 * context), and a token never changes: a rotation seals a new one (a fresh IV), so a rotated
 * secret is a new key here and the old entry merely ages out. A failure is never kept.
 */
export function openSecret(secretBox: SecretBox, token: string, context: string): string {
  let memo = opened.get(secretBox);
  if (!memo) opened.set(secretBox, (memo = new Map()));
  const key = `${context}\n${token}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const secret = secretBox.decrypt(token, context);
  if (memo.size >= MAX_OPENED) memo.delete(memo.keys().next().value as string);
  memo.set(key, secret);
  return secret;
}
