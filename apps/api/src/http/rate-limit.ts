import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { serializeList } from 'structured-headers';
import { withinMs, type Redis } from '@switchboard/queues';
import { ApiError, serviceUnavailable } from '../errors';
import { TOKEN_BUCKET_LUA } from './token-bucket';

/**
 * A limit: a token bucket of `points` requests that an empty bucket takes `durationSec` to
 * refill, i.e. bursts of `points` and `points / durationSec` requests a second sustained.
 */
export interface RateLimitRule {
  /** Part of the Redis key: never rename one in place, or its buckets start over full. */
  name: string;
  points: number;
  /** At least 1 (a bucket smaller than one second of its rate is not supported). */
  durationSec: number;
  /** The 429's message, e.g. "Too many test deliveries for this subscription". */
  message: string;
  /**
   * What a request meets while Redis does not answer: `refuse` (a 503, for limits that
   * guard something risky) or `local` (each API process keeps the limit in its own memory
   * until Redis is back, so an outage of Redis is not an outage of the API).
   */
  whenRedisFails: 'refuse' | 'local';
}

/** Where a key stands after a request was counted, or refused. */
export interface RateLimitDecision {
  allowed: boolean;
  /** The bucket's capacity (`points`). */
  capacity: number;
  /** Whole requests that may be made right now. */
  remaining: number;
  /** Seconds until the bucket is full again (at least 1). */
  fullInSec: number;
  /** When refused: seconds until this request would fit (at least 1); else 0. */
  retryAfterSec: number;
  /** The same in milliseconds, unrounded (at least 1 when refused); else 0. */
  retryAfterMs: number;
}

export const rateLimited = (
  message: string,
  retryAfterSec: number,
  headers: Record<string, string> = {},
): ApiError =>
  new ApiError(429, 'rate_limit_error', 'rate_limited', message, null, {
    ...headers,
    'Retry-After': String(retryAfterSec),
  });

const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11) of one policy, as
 * Structured Field lists serialized by `structured-headers`:
 * - `RateLimit-Policy: "<policy>";q=<burst>;w=<seconds>`: a full bucket (q) and the seconds
 *   an empty one takes to refill (rounded up: the draft wants whole seconds, and rounding up
 *   can only understate the rate), so q/w is the sustained rate;
 * - `RateLimit: "<policy>";r=<remaining>;t=<seconds>`: the whole requests that may be made
 *   now, and the effective window: the seconds until the bucket is full again; on a 429,
 *   r=0 for the Retry-After seconds (the draft: Retry-After never ends before the window).
 * Every 429 carries the fields of the policy that refused it (docs/API.md, Rate limits).
 */
export function policyHeaders(
  policy: string,
  burst: number,
  refillSec: number,
  d: RateLimitDecision,
): Record<string, string> {
  const window = Math.max(1, Math.ceil(refillSec));
  return {
    'RateLimit-Policy': policyField(policy, burst, window),
    RateLimit: fieldOf(policy, 'r', d.remaining, 't', d.allowed ? d.fullInSec : d.retryAfterSec),
  };
}

/** A policy's field depends on its limit only: serialized once per policy and size. */
const policyFields = new Map<string, string>();
const POLICY_FIELDS_MAX = 1_000;

function policyField(policy: string, burst: number, window: number): string {
  const id = `${policy}\n${burst}\n${window}`;
  let field = policyFields.get(id);
  if (field === undefined) {
    field = fieldOf(policy, 'q', burst, 'w', window);
    if (policyFields.size >= POLICY_FIELDS_MAX) policyFields.clear();
    policyFields.set(id, field);
  }
  return field;
}

/** A policy name that serializes as itself between quotes (no `"` or `\`, printable ASCII). */
const PLAIN_NAME = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** The largest Structured Field integer (15 digits). */
const SF_INTEGER_MAX = 999_999_999_999_999;
const isSfInteger = (n: number): boolean => Number.isInteger(n) && Math.abs(n) <= SF_INTEGER_MAX;

/**
 * `"<policy>";<a>=<x>;<b>=<y>`: the one-member list `structured-headers` would write, built
 * directly when the name is plain and both values are integers (always, in practice);
 * anything else goes through `serializeList`, which encodes it or throws as before.
 */
function fieldOf(policy: string, a: string, x: number, b: string, y: number): string {
  if (PLAIN_NAME.test(policy) && isSfInteger(x) && isSfInteger(y)) {
    return `"${policy}";${a}=${x};${b}=${y}`;
  }
  return serializeList([
    [
      policy,
      new Map([
        [a, x],
        [b, y],
      ]),
    ],
  ]);
}

/**
 * How long a request waits for Redis before a `local` limit decides in memory (and a
 * `refuse` one answers 503): long enough for a loaded Redis, short enough that a stuck one
 * costs each request little. Chosen with the request path's Redis deadline (REQUEST_REDIS_TIMEOUT_MS, 500 ms), which bounds the
 * idempotency claim that follows: while Redis is frozen a keyed write is a 503 after at most
 * 300 + 500 ms, every answer within 1 s (docs/decisions/0055-outage-budgets.md).
 */
export const REDIS_DEADLINE_MS = 300;

/**
 * A rate limit counted in Redis with rate-limiter-flexible, so every API process shares the
 * bucket (the token bucket script: ./token-bucket.ts). Built on the API's fail-fast producer
 * connection, under the hash-tagged QUEUE_PREFIX. With Redis down or stuck, a `refuse` limit
 * answers 503 (at once, or after REDIS_DEADLINE_MS); a `local` one falls back to a bucket
 * of the same size in this process's memory (the library's RateLimiterMemory: a fixed window
 * of `points` per `durationSec`), so limits still hold per process.
 */
export class RateLimiter {
  private readonly shared: RateLimiterRedis;
  /** A `local` limit's bucket in this process's memory, used when Redis does not answer. */
  private readonly local: LocalBucket | null;
  /** What a missed deadline names (withinMs's message). */
  private readonly deadline: string;

  constructor(
    redis: Redis,
    prefix: string,
    readonly rule: RateLimitRule,
    /** Called each time a `local` limit had to decide without Redis. */
    onLocalDecision: () => void = () => undefined,
  ) {
    if (!(rule.durationSec >= 1) || !(rule.points >= 1)) {
      throw new Error(`rate limit ${rule.name}: points and durationSec must be at least 1`);
    }
    const options = {
      keyPrefix: `${prefix}:rl:${rule.name}`,
      points: rule.points,
      duration: rule.durationSec,
    };
    this.shared = new RateLimiterRedis({
      ...options,
      storeClient: redis,
      rejectIfRedisNotReady: true,
      customIncrTtlLuaScript: TOKEN_BUCKET_LUA,
    });
    this.local =
      rule.whenRedisFails === 'refuse' ? null : new LocalBucket(options, onLocalDecision);
    this.deadline = `rate limit ${rule.name}`;
  }

  /**
   * Takes `points` tokens (one request each; more for a lease, see KeyRateLimits) for `key`,
   * or none and refuses; 503 when Redis fails a `refuse` limit. Redis gets REDIS_DEADLINE_MS
   * (withinMs: an answer that came while this process was stalled still counts); then a
   * `local` limit decides in memory and a `refuse` one answers 503.
   */
  async check(key: string, points = 1): Promise<RateLimitDecision> {
    try {
      return await this.decide(
        withinMs(REDIS_DEADLINE_MS, this.shared.consume(key, points), this.deadline),
      );
    } catch (err) {
      if (this.local) return this.decide(this.local.consume(key, points));
      const unavailable = serviceUnavailable('The rate limiter is unavailable; retry shortly');
      unavailable.cause = err;
      throw unavailable;
    }
  }

  /**
   * Counts one request for `key`: 429 over the limit (with this rule's RateLimit fields),
   * 503 when Redis fails a `refuse` limit.
   */
  async consume(key: string): Promise<RateLimitDecision> {
    const decision = await this.check(key);
    if (!decision.allowed) {
      throw rateLimited(this.rule.message, decision.retryAfterSec, this.headers(decision));
    }
    return decision;
  }

  /** This rule's RateLimit fields for `decision`. */
  headers(decision: RateLimitDecision): Record<string, string> {
    return policyHeaders(this.rule.name, this.rule.points, this.rule.durationSec, decision);
  }

  /** A bucket's answer: its tokens taken, or its refusal (a RateLimiterRes rejection). */
  private async decide(consumed: Promise<RateLimiterRes>): Promise<RateLimitDecision> {
    try {
      return this.decision(true, await consumed);
    } catch (err) {
      if (err instanceof RateLimiterRes) return this.decision(false, err);
      throw err;
    }
  }

  private decision(allowed: boolean, res: RateLimiterRes): RateLimitDecision {
    return {
      allowed,
      capacity: this.rule.points,
      remaining: allowed ? res.remainingPoints : 0,
      fullInSec: allowed ? seconds(res.msBeforeNext) : Math.ceil(this.rule.durationSec),
      retryAfterSec: allowed ? 0 : seconds(res.msBeforeNext),
      retryAfterMs: allowed ? 0 : Math.max(1, res.msBeforeNext),
    };
  }
}

/** The in-memory insurance of a `local` limit; tells its owner each time it is used. */
class LocalBucket extends RateLimiterMemory {
  constructor(
    options: { keyPrefix: string; points: number; duration: number },
    private readonly onUse: () => void,
  ) {
    super(options);
  }

  override consume(
    key: string | number,
    points?: number,
    options?: { [key: string]: unknown },
  ): Promise<RateLimiterRes> {
    this.onUse();
    return super.consume(key, points, options);
  }
}

/** Counts one request against every rule in turn; the first one over its limit answers. */
export async function consumeAll(
  limits: ReadonlyArray<{ limiter: RateLimiter; key: string }>,
): Promise<void> {
  for (const { limiter, key } of limits) await limiter.consume(key);
}
