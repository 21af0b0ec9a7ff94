import request from 'supertest';
import { closedPort } from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext, type TestContext } from '../support/context';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { baselineMs, boundMs } from '../support/timing';

// POST /webhooks/{id}/test makes the API connect to a URL of the caller's choice, so it is
// rate limited (docs/API.md, Errors and Webhooks): about 10 a minute per subscription and 30 a
// minute per tenant, token buckets in Redis (shared by every API process); over → 429 rate_limited with
// Retry-After; Redis unavailable → a fast 503, never a hung request.
let redis: PrivateRedis;
let ctx: TestContext;
let url: string;

beforeAll(async () => {
  redis = await startPrivateRedis();
  ctx = await createTestContext({ REDIS_URL: redis.url });
  // Nothing listens there: each test delivery fails at once with connection_refused.
  url = `https://127.0.0.1:${await closedPort()}/hook`;
});
afterAll(async () => {
  redis?.thaw();
  await ctx?.close();
  await redis?.stop();
});

async function subscription(auth: string): Promise<string> {
  const res = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url });
  expect(res.status).toBe(201);
  return res.body.id as string;
}
const sendTest = (auth: string, id: string) =>
  request(ctx.app).post(`/api/v1/webhooks/${id}/test`).set('Authorization', auth);

const expectRateLimited = (res: request.Response) => {
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
};

/** Sends tests to `ids` in turn until the first 429 (at most `max`): the successes and it. */
async function untilLimited(auth: string, ids: string[], max: number) {
  let ok = 0;
  for (let i = 0; i < max; i++) {
    const res = await sendTest(auth, ids[i % ids.length] as string);
    if (res.status === 429) return { ok, limited: res };
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: false, error: 'connection_refused' });
    ok++;
  }
  throw new Error(`no 429 within ${max} tests`);
}

// Token buckets: 10 at once per subscription, refilling one every 6 s; 30 at once per
// tenant, refilling one every 2 s. The upper bounds allow for what refilled meanwhile.
it('allows 10 tests at once per subscription, then answers 429 with Retry-After', async () => {
  const { auth } = await ctx.tenant(['admin']);
  const [a, b] = [await subscription(auth), await subscription(auth)];
  const started = Date.now();
  const spent = await untilLimited(auth, [a], 20);
  expect(spent.ok).toBeGreaterThanOrEqual(10);
  expect(spent.ok).toBeLessThanOrEqual(10 + Math.floor((Date.now() - started) / 6000));
  expectRateLimited(spent.limited);
  // The 429 carries the fields of the limit that refused it, not the API key's.
  expect(spent.limited.headers['ratelimit-policy']).toBe('"webhook-test-subscription";q=10;w=60');
  expect(spent.limited.headers.ratelimit).toMatch(/^"webhook-test-subscription";r=0;t=\d+$/);
  // Another subscription has a budget of its own.
  expect((await sendTest(auth, b)).status).toBe(200);
});

it('caps a tenant at 30 tests at once across its subscriptions', async () => {
  const { auth } = await ctx.tenant(['admin']);
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push(await subscription(auth));
  const started = Date.now();
  const spent = await untilLimited(auth, ids, 40);
  expect(spent.ok).toBeGreaterThanOrEqual(30);
  expect(spent.ok).toBeLessThanOrEqual(30 + Math.floor((Date.now() - started) / 2000));
  expectRateLimited(spent.limited);
  expect(spent.limited.body.error.message).toMatch(/per account/);
  // Another tenant is not affected.
  const other = await ctx.tenant(['admin']);
  expect((await sendTest(other.auth, await subscription(other.auth))).status).toBe(200);
});

it('an unknown subscription is a 404 and spends nothing', async () => {
  const { auth } = await ctx.tenant(['admin']);
  const missing = '00000000-0000-4000-8000-000000000000';
  for (let i = 0; i < 12; i++) expect((await sendTest(auth, missing)).status).toBe(404);
  expect((await sendTest(auth, await subscription(auth))).status).toBe(200);
});

it('Redis frozen → 503 within the command timeout, not a hung request', async () => {
  const { auth } = await ctx.tenant(['admin']);
  const id = await subscription(auth);
  const baseline = await baselineMs(() => request(ctx.app).get('/healthz'));
  redis.freeze();
  const started = performance.now();
  let res: request.Response;
  try {
    res = await sendTest(auth, id);
  } finally {
    redis.thaw();
  }
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toBe('1');
  expect(performance.now() - started).toBeLessThan(boundMs(5000, baseline));
});

it('Redis down → 503 at once', async () => {
  const { auth } = await ctx.tenant(['admin']);
  const id = await subscription(auth);
  const baseline = await baselineMs(() => request(ctx.app).get('/healthz'));
  await redis.stop();
  const started = performance.now();
  const res = await sendTest(auth, id);
  const ms = performance.now() - started;
  expect(res.status).toBe(503);
  expect(res.body.error.type).toBe('service_unavailable');
  expect(ms).toBeLessThan(boundMs(1000, baseline));
});
