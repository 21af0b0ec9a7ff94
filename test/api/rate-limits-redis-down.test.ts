import request from 'supertest';
import { parseList } from 'structured-headers';
import { REDIS_DEADLINE_MS } from '../../apps/api/src/http/rate-limit';
import { createTestContext, type TestContext } from '../support/context';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { addReceptionist } from '../support/receptionist';
import { baselineMs, boundMs, timed } from '../support/timing';

// Without Redis the per-key limits fall back to each API process's memory
// (docs/decisions/0027-rate-limits-token-buckets.md): a Redis outage must not take down what needs
// no Redis (reads, and writes whose jobs the reconcilers repair), and a key is still limited
// meanwhile. Idempotency-Key requests, which cannot be answered safely without Redis, stay a fast
// 503.
let redis: PrivateRedis;
let ctx: TestContext;

beforeAll(async () => {
  redis = await startPrivateRedis();
  ctx = await createTestContext({ REDIS_URL: redis.url });
});
afterAll(async () => {
  redis?.thaw();
  await ctx?.close();
  await redis?.stop();
});

const list = (auth: string) =>
  request(ctx.app).get('/api/v1/receptionists').set('Authorization', auth);
const remaining = (res: request.Response): number => {
  const [member] = parseList(res.headers.ratelimit as string);
  return (member as [unknown, Map<string, number>])[1].get('r') as number;
};

it('Redis frozen → a read is answered within the limiter deadline, not after a hang', async () => {
  const { auth } = await ctx.tenant(['read']);
  expect((await list(auth)).status).toBe(200);
  const baseline = await baselineMs(() => list(auth));
  redis.freeze();
  try {
    const { value: res, ms } = await timed(() => list(auth));
    expect(res.status).toBe(200);
    expect(res.headers.ratelimit).toEqual(expect.any(String));
    // The limiter gives Redis REDIS_DEADLINE_MS, then decides in memory (slack from the
    // same read with Redis up: test/support/timing.ts).
    expect(ms).toBeLessThan(boundMs(REDIS_DEADLINE_MS, baseline));
  } finally {
    redis.thaw();
  }
});

it('Redis down → reads work, each key is limited in memory, keyed writes are a fast 503', async () => {
  const { tenantId, auth } = await ctx.tenant(['admin']);
  await ctx.deps.stores.tenants.setRateLimit(tenantId, { perSecond: 1, burst: 3 });
  const other = await ctx.tenant(['admin']);
  const baseline = await baselineMs(() => list(other.auth));
  await redis.stop();

  const statuses: number[] = [];
  const left: number[] = [];
  const { ms } = await timed(async () => {
    for (let i = 0; i < 5; i++) {
      const res = await list(auth);
      statuses.push(res.status);
      left.push(remaining(res));
    }
  });
  // None waits longer than the limiter's deadline (slack from a read with Redis up).
  expect(ms).toBeLessThan(boundMs(5 * REDIS_DEADLINE_MS, baseline));
  // The local bucket has the tenant's size: 3, then refusals (it refills only after 3 s).
  expect(statuses).toEqual([200, 200, 200, 429, 429]);
  expect(left).toEqual([2, 1, 0, 0, 0]);

  expect((await list(other.auth)).status).toBe(200);
  const rcp = await addReceptionist(ctx, other.tenantId, { phoneNumber: '+14155550100' });
  const keyed = await request(ctx.app)
    .post('/api/v1/calls/outbound')
    .set('Authorization', other.auth)
    .set('Idempotency-Key', 'while-redis-is-down')
    .send({ receptionist_id: rcp, to: '+14155550123' });
  expect(keyed.status).toBe(503);
  expect(keyed.body.error.type).toBe('service_unavailable');
  expect(keyed.headers.ratelimit).toEqual(expect.any(String));

  await redis.start();
});

it('once Redis is back, the buckets are counted in Redis again', async () => {
  const { auth } = await ctx.tenant(['read']);
  // The connection reconnects on its own schedule; each request counts where it can.
  const keys = await waitFor(
    'a bucket in Redis',
    async () => {
      expect((await list(auth)).status).toBe(200);
      const found = await ctx.deps.redis
        .keys(`${ctx.config.queuePrefix}:rl:api-key:*`)
        .catch(() => []);
      return found.length > 0 && found;
    },
    { timeoutMs: 45_000, intervalMs: 200 },
  );
  expect(keys.length).toBeGreaterThan(0);
});
