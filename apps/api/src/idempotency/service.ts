import { randomUUID } from 'node:crypto';
import type { Logger } from '@switchboard/logger';
import type { Redis } from '@switchboard/queues';
import { conflict, unprocessable } from '../errors';
import { IDEMPOTENCY_HEADER, idempotencyRedisKey } from './key';
import { IdempotencyStore, type InProgressEntry } from './store';

export interface IdempotencyOptions {
  /** Life of the in-progress marker: a crash mid-request blocks the key this long, no more. */
  inProgressTtlMs: number;
  /** How long a finished response is replayed from Redis (the contract's 24 h). */
  ttlMs: number;
  /**
   * Test seam for crash injection: runs after the operation committed and before its response
   * is stored in Redis. Never set in production, where the path is otherwise the same.
   */
  afterCommit?: () => void | Promise<void>;
}

export const DEFAULT_IDEMPOTENCY_OPTIONS: IdempotencyOptions = {
  inProgressTtlMs: 10_000,
  ttlMs: 24 * 60 * 60 * 1000,
};

/** A response of an idempotent operation, as sent and as replayed. */
export interface IdempotentResponse {
  status: number;
  body: unknown;
  location: string | null;
  /** True when this repeats the response of an earlier request with the same key. */
  replayed: boolean;
}

export const idempotencyKeyReused = () =>
  unprocessable(
    'idempotency_key_reused',
    'This Idempotency-Key was already used with a different request body',
    IDEMPOTENCY_HEADER,
  );

const requestInProgress = () =>
  conflict(
    'idempotency_request_in_progress',
    'A request with this Idempotency-Key is still in progress; retry shortly',
    { 'Retry-After': '1' },
  );

/**
 * Idempotency-Key handling (docs/API.md, Outbound calls), tenant-scoped. Invariants:
 * - the operation runs only while this request holds the key's in-progress marker, so two
 *   requests with one key never run it concurrently (the second gets 409, or 422 if its body
 *   differs);
 * - only a success is stored, after the operation committed; any error releases the marker,
 *   so a failed validation leaves the key free for a corrected retry;
 * - if the process dies between the commit and the Redis write, or Redis loses the entry,
 *   the marker expires and the operation's own backstop (a unique index on the key) turns the
 *   retry into a replay: Redis makes replays fast, Postgres makes them certain.
 */
export class Idempotency {
  private readonly store: IdempotencyStore;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly options: IdempotencyOptions,
    private readonly logger: Logger,
  ) {
    this.store = new IdempotencyStore(redis, {
      inProgressMs: options.inProgressTtlMs,
      doneMs: options.ttlMs,
    });
  }

  async run(
    tenantId: string,
    key: string,
    fingerprint: string,
    operation: () => Promise<IdempotentResponse>,
  ): Promise<IdempotentResponse> {
    const redisKey = idempotencyRedisKey(this.prefix, tenantId, key);
    const marker: InProgressEntry = {
      state: 'in_progress',
      fingerprint,
      owner: randomUUID(),
    };
    const held = await this.store.claim(redisKey, marker);
    if (held) {
      if (held.fingerprint !== fingerprint) throw idempotencyKeyReused();
      if (held.state === 'in_progress') throw requestInProgress();
      return { status: held.status, body: held.body, location: held.location, replayed: true };
    }

    let response: IdempotentResponse;
    try {
      response = await operation();
    } catch (err) {
      await this.store.release(redisKey, marker);
      throw err;
    }
    await this.options.afterCommit?.();
    const { status, body, location } = response;
    try {
      await this.store.finish(redisKey, { state: 'done', fingerprint, status, body, location });
    } catch (err) {
      // Committed already: answer it. Until the marker expires a retry gets 409, then the
      // backstop replays it.
      this.logger.warn({ err, tenantId }, 'idempotent response not stored in Redis');
    }
    return response;
  }
}
