import type { Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { RateLimit } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { Redis } from '@switchboard/queues';
import { policyHeaders, RateLimiter, rateLimited, type RateLimitDecision } from './rate-limit';

/** The policy's name in both headers; also part of the Redis keys (never rename it). */
export const KEY_POLICY = 'api-key';

/** The RateLimit fields of the per-key policy (see policyHeaders). */
export const rateLimitHeaders = (limit: RateLimit, d: RateLimitDecision): Record<string, string> =>
  policyHeaders(KEY_POLICY, limit.burst, limit.burst / limit.perSecond, d);

const LOCAL_WARN_EVERY_MS = 10_000;

/**
 * Leases (docs/decisions/0029-rate-limit-leases.md): an API process takes a key's tokens from Redis
 * a few at a time and spends them in memory, so a busy key costs one Redis round trip per lease,
 * not per request. A lease is at most LEASE_MAX tokens and a twentieth of the key's burst (a bucket
 * under 40 leases one token: exactly one round trip per request, as without leases); it starts at
 * one token and doubles each time one is spent within LEASE_TTL_MS, halving when one expires
 * unspent, so a quiet key leases one token per request. Tokens leased and not spent within
 * LEASE_TTL_MS are dropped, not returned: a lease can only make the limit stricter. Bound: every
 * request spends a token Redis granted, so the limit holds across all API processes; a key may be
 * refused while up to (lease − 1) of its tokens sit unspent in each other process, for LEASE_TTL_MS
 * at most.
 */
export const LEASE_MAX = 50;
const LEASE_SHARE_OF_BURST = 20;
export const LEASE_TTL_MS = 1_000;
const LEASED_KEYS_MAX = 10_000;

/** The tokens of one key this process holds, and what Redis said when they were taken. */
interface Lease {
  /** The bucket size this lease was taken for (a new size starts over). */
  size: string;
  left: number;
  takenAt: number;
  /** The next lease's size. */
  next: number;
  /** Redis' decision when the lease was taken (remaining: tokens left in Redis). */
  granted: RateLimitDecision | null;
  /** The lease being taken now: concurrent requests of the key wait for it, not take more. */
  pending: Promise<RateLimitDecision | null> | null;
}

/**
 * The per-key rate limit of every authenticated request (docs/API.md, Rate limits): a token
 * bucket per API key in Redis, sized by the key's tenant (or the deployment's defaults),
 * spent by each process from leases of a few tokens (LEASE_MAX). While Redis does not answer, each API process limits in its own memory (see
 * docs/decisions/0027-rate-limits-token-buckets.md): reads and writes that need no Redis keep
 * working.
 */
export class KeyRateLimits {
  /** One limiter per bucket size in use; tenants share them (sizes are few). */
  private readonly limiters = new Map<string, RateLimiter>();
  private readonly leases = new LRUCache<string, Lease>({ max: LEASED_KEYS_MAX });
  private lastLocalWarning = 0;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly defaults: RateLimit,
    private readonly logger: Logger,
  ) {}

  /**
   * Counts one request of `keyId`, sets both headers on `res` (so every later answer, error
   * or not, carries them), and throws 429 `rate_limited` when the bucket is empty.
   */
  async apply(res: Response, keyId: string, tenantLimit: RateLimit | null): Promise<void> {
    const limit = tenantLimit ?? this.defaults;
    const decision = await this.take(keyId, limit);
    const headers = rateLimitHeaders(limit, decision);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (!decision.allowed) {
      throw rateLimited(
        `Too many requests for this API key: at most ${limit.perSecond} a second, in bursts ` +
          `of up to ${limit.burst}; retry after ${decision.retryAfterSec} s (Retry-After)`,
        decision.retryAfterSec,
        headers,
      );
    }
  }

  /** One token of `keyId`: from this process's lease, or a new lease taken from Redis. */
  private async take(keyId: string, limit: RateLimit): Promise<RateLimitDecision> {
    const size = `${limit.perSecond}/${limit.burst}`;
    for (;;) {
      let lease = this.leases.get(keyId);
      if (!lease || lease.size !== size) {
        lease = { size, left: 0, takenAt: 0, next: 1, granted: null, pending: null };
        this.leases.set(keyId, lease);
      }
      const now = Date.now();
      if (lease.left > 0 && now - lease.takenAt >= LEASE_TTL_MS) {
        lease.left = 0; // expired unspent: dropped, and the next lease is smaller
        lease.next = Math.max(1, lease.next >> 1);
      }
      if (lease.left > 0 && lease.granted) {
        lease.left -= 1;
        return this.fromLease(lease, limit);
      }
      if (lease.pending) {
        // Another request of this key is taking a lease: share it, or its refusal.
        const refused = await lease.pending;
        if (refused) return refused;
        continue;
      }
      const pending = this.lease(keyId, lease, limit, now);
      lease.pending = pending;
      try {
        const refused = await pending;
        if (refused) return refused;
      } finally {
        lease.pending = null;
      }
    }
  }

  /** Takes the next lease from Redis; resolves with the refusal when not even one is left. */
  private async lease(
    keyId: string,
    lease: Lease,
    limit: RateLimit,
    now: number,
  ): Promise<RateLimitDecision | null> {
    const max = Math.max(1, Math.min(LEASE_MAX, Math.floor(limit.burst / LEASE_SHARE_OF_BURST)));
    // Spent within its lifetime: the key is busy here, lease twice as many next time.
    if (lease.granted && now - lease.takenAt < LEASE_TTL_MS) lease.next *= 2;
    let want = Math.min(max, lease.next);
    const limiter = this.limiterFor(limit);
    let decision = await limiter.check(keyId, want);
    if (!decision.allowed && want > 1) {
      // Fewer than a lease left: take the last tokens one at a time.
      want = 1;
      decision = await limiter.check(keyId, 1);
    }
    if (!decision.allowed) {
      lease.granted = null;
      lease.next = 1;
      return decision;
    }
    lease.next = want;
    lease.left = want;
    lease.takenAt = Date.now();
    lease.granted = decision;
    return null;
  }

  /**
   * The decision of a request served from a lease. `remaining` counts the tokens left in
   * Redis and those still leased here; the window is Redis' while no leased token is left,
   * else the time the tokens not available take to refill (capacity − remaining).
   */
  private fromLease(lease: Lease, limit: RateLimit): RateLimitDecision {
    const granted = lease.granted as RateLimitDecision;
    const remaining = Math.min(limit.burst, granted.remaining + lease.left);
    const fullInSec =
      lease.left === 0
        ? granted.fullInSec
        : Math.max(1, Math.ceil((limit.burst - remaining) / limit.perSecond));
    return { ...granted, remaining, fullInSec };
  }

  private limiterFor(limit: RateLimit): RateLimiter {
    const size = `${limit.perSecond}/${limit.burst}`;
    let limiter = this.limiters.get(size);
    if (!limiter) {
      limiter = new RateLimiter(
        this.redis,
        this.prefix,
        {
          // One bucket per key whatever its size, so a new limit applies to the same bucket.
          name: KEY_POLICY,
          points: limit.burst,
          durationSec: limit.burst / limit.perSecond,
          message: 'Too many requests for this API key',
          whenRedisFails: 'local',
        },
        () => this.warnLocal(),
      );
      this.limiters.set(size, limiter);
    }
    return limiter;
  }

  private warnLocal(): void {
    const now = Date.now();
    if (now - this.lastLocalWarning < LOCAL_WARN_EVERY_MS) return;
    this.lastLocalWarning = now;
    this.logger.warn('redis does not answer: API rate limits are kept in this process meanwhile');
  }
}
