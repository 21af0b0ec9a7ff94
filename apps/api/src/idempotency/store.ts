import { REQUEST_REDIS_TIMEOUT_MS, withinMs, type Redis } from '@switchboard/queues';
import { serviceUnavailable } from '../errors';
import { parseEntry, type IdempotencyEntry } from './entry';

export type InProgressEntry = Extract<IdempotencyEntry, { state: 'in_progress' }>;
export type DoneEntry = Extract<IdempotencyEntry, { state: 'done' }>;

/** Deletes the marker only if it is still the caller's (never someone else's response). */
const RELEASE_SCRIPT =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/** Tries at claiming a key whose entry vanished between the SET NX and the GET. */
const CLAIM_TRIES = 3;

/** Waits between tries at taking back a marker while Redis does not answer. */
const RELEASE_RETRY_MS = [100, 250, 500, 1000];

/**
 * Idempotency entries in Redis. Runs on the API's fail-fast producer connection: while Redis
 * is away every command rejects at once (or after REQUEST_REDIS_TIMEOUT_MS, 500 ms, when it
 * holds the connection without answering), and that becomes a 503 with Retry-After, never a
 * hung request or a 500.
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
    // Not connected: nothing would be sent (no offline queue), so there is nothing to undo.
    if (this.redis.status !== 'ready')
      throw unavailable(new Error(`redis is ${this.redis.status}`));
    for (let i = 0; i < CLAIM_TRIES; i++) {
      let set: string | null;
      try {
        set = await withinMs(
          REQUEST_REDIS_TIMEOUT_MS,
          this.redis.set(key, value, 'PX', this.ttl.inProgressMs, 'NX'),
          'idempotency claim',
        );
      } catch (err) {
        // A timed-out SET NX is not a failed one: it is still in the connection and runs
        // when Redis answers again (a frozen server resumes; ioredis resends unanswered
        // commands after a reconnect). This request is answered 503 and will never finish
        // or release that marker, so take it back, owner-checked, as soon as Redis answers.
        this.releaseEventually(key, value);
        throw unavailable(err);
      }
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

  /**
   * Removes the caller's marker so the key can be used again (the request failed). Never
   * throws: when Redis does not answer, the release is retried in the background.
   */
  async release(key: string, marker: InProgressEntry): Promise<void> {
    const value = JSON.stringify(marker);
    try {
      await this.redis.eval(RELEASE_SCRIPT, 1, key, value);
    } catch {
      this.releaseEventually(key, value);
    }
  }

  /**
   * Deletes the marker `value` if it is (or becomes) the key's entry, retrying until Redis
   * answers or the marker would have expired anyway. Commands on one connection run in
   * order, so once this script has an answer the earlier SET NX has run (or never will),
   * and the compare-and-delete settled it. Owner-checked: another request's marker or a
   * stored response is never touched. Timers are unref'd: this never holds a process open.
   */
  private releaseEventually(key: string, value: string): void {
    const deadline = Date.now() + this.ttl.inProgressMs;
    const attempt = (n: number): void => {
      if (Date.now() > deadline || this.redis.status === 'end') return;
      this.redis.eval(RELEASE_SCRIPT, 1, key, value).catch(() => {
        const wait = RELEASE_RETRY_MS[Math.min(n, RELEASE_RETRY_MS.length - 1)] as number;
        setTimeout(() => attempt(n + 1), wait).unref();
      });
    };
    attempt(0);
  }

  private async call<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await withinMs(REQUEST_REDIS_TIMEOUT_MS, op(), 'idempotency store');
    } catch (err) {
      throw unavailable(err);
    }
  }
}

const unavailable = (cause: unknown) => {
  const err = serviceUnavailable('The idempotency store is unavailable; retry shortly');
  err.cause = cause;
  return err;
};
