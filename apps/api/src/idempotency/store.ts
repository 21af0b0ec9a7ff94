import type { Redis } from '@switchboard/queues';
import { serviceUnavailable } from '../errors';
import { parseEntry, type IdempotencyEntry } from './entry';

export type InProgressEntry = Extract<IdempotencyEntry, { state: 'in_progress' }>;
export type DoneEntry = Extract<IdempotencyEntry, { state: 'done' }>;

/** Deletes the marker only if it is still the caller's (never someone else's response). */
const RELEASE_SCRIPT =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/** Tries at claiming a key whose entry vanished between the SET NX and the GET. */
const CLAIM_TRIES = 3;

/**
 * Idempotency entries in Redis. Runs on the API's fail-fast producer connection: while Redis
 * is away every command rejects at once (or after the 2 s command timeout), and that becomes
 * a 503 with Retry-After, never a hung request or a 500.
 */
export class IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly ttl: { inProgressMs: number; doneMs: number },
  ) {}

  /**
   * Claims `key` with an in-progress marker (SET NX PX). Null when this request now holds
   * the key; otherwise the entry that holds it (an in-progress marker or a stored response).
   */
  async claim(key: string, marker: InProgressEntry): Promise<IdempotencyEntry | null> {
    const value = JSON.stringify(marker);
    for (let i = 0; i < CLAIM_TRIES; i++) {
      const set = await this.call(() =>
        this.redis.set(key, value, 'PX', this.ttl.inProgressMs, 'NX'),
      );
      if (set === 'OK') return null;
      const raw = await this.call(() => this.redis.get(key));
      if (raw === null) continue; // released or expired in between: claim again
      const entry = parseEntry(raw);
      if (entry) return entry;
      await this.call(() => this.redis.del(key)); // not an entry of ours: drop it
    }
    // The key keeps changing hands: say so like any other request in progress.
    return { ...marker, owner: '' };
  }

  /** Stores the response for replays; replaces the marker. */
  async finish(key: string, entry: DoneEntry): Promise<void> {
    await this.call(() => this.redis.set(key, JSON.stringify(entry), 'PX', this.ttl.doneMs));
  }

  /** Removes the caller's marker so the key can be used again (the request failed). */
  async release(key: string, marker: InProgressEntry): Promise<void> {
    await this.call(() => this.redis.eval(RELEASE_SCRIPT, 1, key, JSON.stringify(marker)));
  }

  private async call<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      const unavailable = serviceUnavailable('The idempotency store is unavailable; retry shortly');
      unavailable.cause = err;
      throw unavailable;
    }
  }
}
