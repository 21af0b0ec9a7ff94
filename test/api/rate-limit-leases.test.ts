import type { Response } from 'express';
import { createLogger } from '@switchboard/logger';
import { ApiError } from '../../apps/api/src/errors';
import { KeyRateLimits, LEASE_MAX } from '../../apps/api/src/http/key-rate-limit';
import { RateLimiter } from '../../apps/api/src/http/rate-limit';
import { createTestContext, type TestContext } from '../support/context';
import { uid } from '../support/fixtures';

// The per-key limit is spent from leases (docs/decisions/0029-rate-limit-leases.md): each API
// process takes a key's tokens from Redis a few at a time. Two KeyRateLimits on one Redis prefix
// are two API processes.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const DEFAULTS = { perSecond: 100, burst: 200 };
const processes = () =>
  [0, 1].map(
    () =>
      new KeyRateLimits(
        ctx.deps.redis,
        ctx.config.queuePrefix,
        DEFAULTS,
        createLogger('api', 'silent'),
      ),
  );

/** A response that keeps its headers. */
const response = () => {
  const headers: Record<string, string> = {};
  return {
    headers,
    res: {
      setHeader: (name: string, value: string) => (headers[name] = value),
    } as unknown as Response,
  };
};

/** One request of `keyId` through `limits`: its headers, and the 429 if refused. */
async function spend(limits: KeyRateLimits, keyId: string, limit = DEFAULTS) {
  const { res, headers } = response();
  try {
    await limits.apply(res, keyId, limit);
    return { headers, refused: null };
  } catch (err) {
    if (err instanceof ApiError && err.status === 429) return { headers, refused: err };
    throw err;
  }
}

afterEach(() => jest.restoreAllMocks());

it('a busy key takes its tokens from Redis a lease at a time, not one per request', async () => {
  const redisCalls = jest.spyOn(RateLimiter.prototype, 'check');
  const [limits] = processes();
  const keyId = `key_${uid()}`;
  const limit = { perSecond: 1_000, burst: 100_000 };
  for (let i = 0; i < 500; i++) {
    expect((await spend(limits!, keyId, limit)).refused).toBeNull();
  }
  // 1 + 2 + 4 + … up to LEASE_MAX a lease: far fewer round trips than requests (a lease
  // expires unspent only after a second, so only a very slow machine takes more).
  expect(redisCalls.mock.calls.length).toBeLessThan(500 / 5);
  expect(redisCalls.mock.calls.every(([, points]) => (points ?? 1) <= LEASE_MAX)).toBe(true);
});

it('two processes together never exceed the bucket, and a 429 keeps its fields', async () => {
  const limit = { perSecond: 1, burst: 400 }; // leases of up to 20
  const both = processes();
  const keyId = `key_${uid()}`;
  const started = Date.now();
  let allowed = 0;
  let refusal: Awaited<ReturnType<typeof spend>> | null = null;
  // Alternate the processes until both are refused.
  const done = [false, false];
  for (let i = 0; i < 2_000 && !(done[0] && done[1]); i++) {
    const p = i % 2;
    if (done[p]) continue;
    const r = await spend(both[p]!, keyId, limit);
    if (r.refused) {
      done[p] = true;
      refusal = r;
    } else allowed += 1;
  }
  const refilled = Math.ceil((Date.now() - started) / 1000) * limit.perSecond;
  // Never more than Redis granted; fewer by at most the other process's unspent lease.
  expect(allowed).toBeLessThanOrEqual(limit.burst + refilled);
  expect(allowed).toBeGreaterThanOrEqual(limit.burst - (20 - 1));
  const err = refusal?.refused as ApiError;
  expect(err.code).toBe('rate_limited');
  expect(err.headers?.['Retry-After']).toBe('1');
  expect(refusal?.headers['RateLimit-Policy']).toBe('"api-key";q=400;w=400');
  expect(refusal?.headers.RateLimit).toBe('"api-key";r=0;t=1');
});

it('the RateLimit field counts the tokens of the lease held here', async () => {
  const [limits] = processes();
  const keyId = `key_${uid()}`;
  const limit = { perSecond: 1, burst: 50 }; // leases of up to 2
  const seen: { r: number; t: number }[] = [];
  for (let i = 0; i < 6; i++) {
    const { headers } = await spend(limits!, keyId, limit);
    const m = /r=(\d+);t=(\d+)/.exec(headers.RateLimit ?? '');
    seen.push({ r: Number(m?.[1]), t: Number(m?.[2]) });
  }
  // One fewer each time (at most one token refills between two of them at 1 a second), and
  // the window is always the time the missing tokens take to come back.
  expect(seen[0]).toEqual({ r: 49, t: 1 });
  for (let i = 1; i < seen.length; i++) {
    expect(seen[i]!.r).toBeLessThanOrEqual(seen[i - 1]!.r);
    expect(seen[i]!.r).toBeGreaterThanOrEqual(seen[i - 1]!.r - 1);
  }
  for (const { r, t } of seen) expect(t).toBe(50 - r);
});
