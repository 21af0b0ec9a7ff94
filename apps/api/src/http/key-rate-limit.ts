import type { Response } from 'express';
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
 * The per-key rate limit of every authenticated request (docs/API.md, Rate limits): a token
 * bucket per API key in Redis, sized by the key's tenant (or the deployment's defaults).
 * While Redis does not answer, each API process limits in its own memory (see
 * docs/DECISIONS.md, Rate limits): reads and writes that need no Redis keep working.
 */
export class KeyRateLimits {
  /** One limiter per bucket size in use; tenants share them (sizes are few). */
  private readonly limiters = new Map<string, RateLimiter>();
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
    const decision = await this.limiterFor(limit).check(keyId);
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
