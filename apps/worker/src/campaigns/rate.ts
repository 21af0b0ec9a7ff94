import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from '@switchboard/queues';

/** A fixed window of rate-limiter-flexible: at most `points` per `durationSec` seconds. */
export interface RateWindow {
  durationSec: number;
  points: number;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * The windows that hold a campaign at `perMinute` messages a minute, steadily:
 * - `exact`: the shortest whole-second window that holds a whole number of messages at
 *   that rate (600/min: 10 per second; 90/min: 3 per 2 s; 7/min: 7 per minute), so the
 *   long-run rate is exactly `perMinute`;
 * - `pace`, when `exact` would allow a burst: at most the per-second share (599/min: 10 a
 *   second) or one message per `floor(60 / perMinute)` seconds (7/min: one per 8 s), so the
 *   messages of a long window are spread over it instead of leaving at its start.
 */
export function rateWindows(perMinute: number): { exact: RateWindow; pace: RateWindow | null } {
  const g = gcd(perMinute, 60);
  const exact = { durationSec: 60 / g, points: perMinute / g };
  if (exact.durationSec === 1 || exact.points === 1) return { exact, pace: null };
  const pace =
    perMinute >= 60
      ? { durationSec: 1, points: Math.ceil(perMinute / 60) }
      : { durationSec: Math.floor(60 / perMinute), points: 1 };
  return { exact, pace };
}

/** A denied take waits at least this long, whatever Redis said (a key without a TTL). */
const MIN_WAIT_MS = 10;

/**
 * The rate of every campaign, counted in Redis with rate-limiter-flexible, so that all
 * worker processes together keep each campaign's `send_rate_per_minute`, and each tenant's
 * campaigns together `CAMPAIGN_TENANT_RATE_PER_MINUTE`: one counter per campaign (and per
 * tenant, key `tenant:<id>`) and window under `<QUEUE_PREFIX>:campaign-rate:…` (the prefix
 * is a hash tag, so a Redis Cluster keeps working). A take that a later window refuses gives
 * its points of the earlier ones back, so neither the pace nor the tenant's share eats an
 * allowance it did not use.
 */
export class CampaignRateLimiter {
  private readonly limiters = new Map<string, RateLimiterRedis>();

  constructor(
    private readonly redis: Redis,
    private readonly queuePrefix: string,
    private readonly tenantPerMinute: number,
  ) {}

  /**
   * Takes the right to send one message of the campaign now, from the campaign's rate and
   * then its tenant's: 0 when granted, else how many milliseconds to wait before asking
   * again. Throws when Redis does not answer.
   */
  async take(campaignId: string, perMinute: number, tenantId: string): Promise<number> {
    const campaign = await this.takeAt(campaignId, perMinute);
    if (campaign.waitMs > 0) return campaign.waitMs;
    const tenant = await this.takeAt(`tenant:${tenantId}`, this.tenantPerMinute);
    if (tenant.waitMs > 0) await campaign.giveBack();
    return tenant.waitMs;
  }

  /** One unit of `perMinute` for `key`: the wait (0: taken) and how to give it back. */
  private async takeAt(
    key: string,
    perMinute: number,
  ): Promise<{ waitMs: number; giveBack: () => Promise<void> }> {
    const { exact, pace } = rateWindows(perMinute);
    const exactLimiter = this.limiter(exact);
    const none = async () => undefined;
    const waitExact = await this.consume(exactLimiter, key);
    if (waitExact > 0) return { waitMs: waitExact, giveBack: none };
    const giveExact = async () => {
      await exactLimiter.reward(key, 1);
    };
    if (!pace) return { waitMs: 0, giveBack: giveExact };
    const paceLimiter = this.limiter(pace);
    const waitPace = await this.consume(paceLimiter, key);
    if (waitPace > 0) {
      await giveExact();
      return { waitMs: waitPace, giveBack: none };
    }
    return {
      waitMs: 0,
      giveBack: async () => {
        await Promise.all([giveExact(), paceLimiter.reward(key, 1)]);
      },
    };
  }

  private async consume(limiter: RateLimiterRedis, key: string): Promise<number> {
    try {
      await limiter.consume(key);
      return 0;
    } catch (err) {
      if (err instanceof RateLimiterRes) return Math.max(err.msBeforeNext, MIN_WAIT_MS);
      throw err;
    }
  }

  private limiter(w: RateWindow): RateLimiterRedis {
    const name = `${w.durationSec}s${w.points}`;
    let limiter = this.limiters.get(name);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: `${this.queuePrefix}:campaign-rate:${name}`,
        points: w.points,
        duration: w.durationSec,
      });
      this.limiters.set(name, limiter);
    }
    return limiter;
  }
}
