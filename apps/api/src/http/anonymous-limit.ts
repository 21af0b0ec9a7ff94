import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import type { Logger } from '@switchboard/logger';
import type { Redis } from '@switchboard/queues';
import { ApiError, type ErrorAnswer } from '../errors';
import { rateLimited, RateLimiter, type RateLimitDecision } from './rate-limit';

/** The policy's name in both RateLimit fields; also part of the Redis keys (never rename). */
export const ANONYMOUS_POLICY = 'client-address';

/** How many keys, and for how long, this process remembers as having been valid. */
const KNOWN_KEYS_MAX = 10_000;
/** How many refused addresses this process remembers (each for its Retry-After at most). */
const REFUSED_MAX = 100_000;
const KNOWN_KEY_TTL_MS = 10 * 60_000;
/** Distinct Retry-After values whose early 429 is kept built. */
const ANSWERS_MAX = 64;
const LOCAL_WARN_EVERY_MS = 10_000;

/**
 * The limit before authentication (docs/API.md, Rate limits): a token bucket per client
 * address (`req.ip`: the TCP peer, or what X-Forwarded-For says only when TRUST_PROXY trusts
 * the proxy) for requests without a valid credential. Every request that this process cannot
 * yet tell apart from a guess takes a token before anything is looked up: no key, a
 * malformed header, a wrong ingestion token, or a key not seen valid here lately. So a flood
 * of made-up keys costs one Redis call each and then nothing, never a Postgres query per
 * request, while a valid key, once seen, never waits on its address's bucket (a tenant
 * behind the same NAT as an attacker keeps working).
 *
 * When Redis refuses an address, it also says when the next request would fit; until then
 * this process refuses that address's requests itself (`refusal`), without asking Redis. It
 * gives the answer Redis would give: a refused request takes no token, and other processes
 * can only take more, so the bucket cannot hold a token before that instant. So a flood from
 * one address costs about two Redis calls per token it is allowed, whatever its pace, and
 * the early refusal (./early-refusal.ts) answers it before the rest of the app runs.
 */
export class AnonymousLimits {
  private readonly limiter: RateLimiter;
  /** sha256 of keys found active lately; a hash of a key the caller cannot forge. */
  private readonly knownKeys = new LRUCache<string, true>({
    max: KNOWN_KEYS_MAX,
    ttl: KNOWN_KEY_TTL_MS,
  });
  /** Address → when (performance.now() ms) its bucket will hold a token again. */
  private readonly refusedUntil = new LRUCache<string, number>({ max: REFUSED_MAX });
  /**
   * Address → when (performance.now() ms) the Retry-After of the last 429 that closed its
   * connection ends: until then its new connections are not read (./held-connections.ts).
   */
  private readonly toldUntil = new LRUCache<string, number>({ max: REFUSED_MAX });
  /** The early 429 by its Retry-After in seconds (at most the refill time of the bucket). */
  private readonly answers = new Map<number, ErrorAnswer>();
  private lastLocalWarning = 0;

  constructor(
    redis: Redis,
    prefix: string,
    limit: { perSecond: number; burst: number },
    private readonly logger: Logger,
  ) {
    this.limiter = new RateLimiter(
      redis,
      prefix,
      {
        name: ANONYMOUS_POLICY,
        points: limit.burst,
        durationSec: limit.burst / limit.perSecond,
        message:
          `Too many requests without a valid credential from this address: at most ` +
          `${limit.perSecond} a second, in bursts of up to ${limit.burst}; retry after Retry-After`,
        // An outage of Redis must not become an outage of authentication.
        whenRedisFails: 'local',
      },
      () => this.warnLocal(),
    );
  }

  /**
   * Takes one token from the client address's bucket; 429 (with its fields, and
   * `closingFor(req)`) when empty.
   */
  async count(req: Request): Promise<void> {
    const address = clientAddress(req);
    const early = this.refusal(address);
    if (early) {
      const { status, type, code, message, param, headers } = early;
      throw new ApiError(status, type, code, message, param, {
        ...headers,
        ...this.closing(req, address),
      });
    }
    const decision = await this.limiter.check(address);
    if (decision.allowed) return;
    this.refusedUntil.set(address, performance.now() + decision.retryAfterMs);
    throw this.refused(decision, this.closing(req, address));
  }

  /** `closingFor(req)` of a refusal; when it closes, the client was told to wait (`told`). */
  private closing(req: Request, address: string): Record<string, string> {
    const closing = closingFor(req);
    if (closing === CLOSE) this.told(address);
    return closing;
  }

  /**
   * Records that `address` itself (the TCP peer, not a proxy) was just refused and its
   * connection closed: it was told to retry after the whole seconds its refusal lasts, and
   * `toldToWait` reports that instant to the connection hold.
   */
  told(address: string): void {
    const until = this.refusedUntil.get(address);
    if (until === undefined) return;
    const now = performance.now();
    const retryAfterMs = Math.max(1, Math.ceil((until - now) / 1000)) * 1000;
    this.toldUntil.set(address, now + retryAfterMs);
  }

  /** When (performance.now() ms) the Retry-After `address` was last told ends, if still ahead. */
  toldToWait(address: string): number | undefined {
    const until = this.toldUntil.get(address);
    if (until === undefined) return undefined;
    if (until <= performance.now()) {
      this.toldUntil.delete(address);
      return undefined;
    }
    return until;
  }

  /**
   * The 429 this address gets without asking Redis, while the last refusal Redis gave it
   * still holds; undefined once it may have a token again (then `count` asks Redis).
   */
  refusal(address: string): ErrorAnswer | undefined {
    const until = this.refusedUntil.get(address);
    if (until === undefined) return undefined;
    const left = until - performance.now();
    if (left <= 0) {
      this.refusedUntil.delete(address);
      return undefined;
    }
    return this.refusedFor(left);
  }

  /**
   * The 429 of a refusal that lasts `leftMs` more, as data: the same answer as the thrown
   * one, without the cost of an Error (its stack) on a path a flood takes.
   */
  private refusedFor(leftMs: number): ErrorAnswer {
    const retryAfterSec = Math.max(1, Math.ceil(leftMs / 1000));
    // It depends on the whole seconds left only: built once per value (a flood's refusals
    // then serialize no header field of their own).
    const built = this.answers.get(retryAfterSec);
    if (built) return built;
    const headers = this.limiter.headers({
      allowed: false,
      capacity: this.limiter.rule.points,
      remaining: 0,
      fullInSec: Math.ceil(this.limiter.rule.durationSec),
      retryAfterSec,
      retryAfterMs: leftMs,
    });
    const answer: ErrorAnswer = Object.freeze({
      status: 429,
      type: 'rate_limit_error',
      code: 'rate_limited',
      message: this.limiter.rule.message,
      param: null,
      headers: Object.freeze({ ...headers, 'Retry-After': String(retryAfterSec) }),
    });
    if (this.answers.size >= ANSWERS_MAX) this.answers.clear();
    this.answers.set(retryAfterSec, answer);
    return answer;
  }

  /** Whether a key with this hash was found active by this process lately. */
  isKnown(keyHash: string): boolean {
    return this.knownKeys.has(keyHash);
  }

  remember(keyHash: string): void {
    this.knownKeys.set(keyHash, true);
  }

  private refused(decision: RateLimitDecision, extra: Record<string, string>): ApiError {
    const rule = this.limiter.rule;
    return rateLimited(rule.message, decision.retryAfterSec, {
      ...this.limiter.headers(decision),
      ...extra,
    });
  }

  private warnLocal(): void {
    const now = Date.now();
    if (now - this.lastLocalWarning < LOCAL_WARN_EVERY_MS) return;
    this.lastLocalWarning = now;
    this.logger.warn('redis does not answer: the per-address limit is kept in this process');
  }
}

/** The address a request's limit is counted by: `req.ip` (TRUST_PROXY decides), or the peer. */
export const clientAddress = (req: Request): string =>
  req.ip ?? req.socket.remoteAddress ?? 'unknown';

/**
 * `Connection: close` for a 429 of this limit when the TCP peer is the client itself (not a
 * proxy that TRUST_PROXY trusts, whose connection carries other clients): a client over its
 * limit opens a new connection for its next request. Measured, this halves what a flood
 * from one address costs other tenants (docs/decisions/0105-floods-cost-other-tenants-nothing.md):
 * the flooder pays a connection per request, and sends about half as many.
 */
export const closingFor = (req: Request): Record<string, string> =>
  clientAddress(req) === req.socket.remoteAddress ? CLOSE : {};
const CLOSE = Object.freeze({ Connection: 'close' });
