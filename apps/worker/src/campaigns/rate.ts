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
 * worker processes together keep each campaign's `send_rate_per_minute`: one counter per
 * campaign and window under `<QUEUE_PREFIX>:campaign-rate:…` (the prefix is a hash tag, so
 * a Redis Cluster keeps working). A take that the pace window refuses gives its point of
 * the exact window back, so the pace never eats the exact window's allowance.
 */
export class CampaignRateLimiter {
  private readonly limiters = new Map<string, RateLimiterRedis>();

  constructor(
    private readonly redis: Redis,
    private readonly queuePrefix: string,
  ) {}

  /**
   * Takes the right to send one message of the campaign now: 0 when granted, else how many
   * milliseconds to wait before asking again. Throws when Redis does not answer.
   */
  async take(campaignId: string, perMinute: number): Promise<number> {
    const { exact, pace } = rateWindows(perMinute);
    const exactLimiter = this.limiter(exact);
    const waitExact = await this.consume(exactLimiter, campaignId);
    if (waitExact > 0 || !pace) return waitExact;
    const waitPace = await this.consume(this.limiter(pace), campaignId);
    if (waitPace > 0) await exactLimiter.reward(campaignId, 1);
    return waitPace;
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
