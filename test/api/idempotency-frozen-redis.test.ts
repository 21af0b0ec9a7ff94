import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { uid } from '../support/fixtures';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';

// A keyed request while Redis is frozen gets a 503 after the command timeout, but its SET NX
// is still in the connection and runs when Redis resumes. That marker belongs to no running
// request: it must be taken back, or the key answers 409 for the marker's whole life.
// The marker lives a minute here so that "taken back" and "expired" cannot be confused.
let redis: PrivateRedis;
let ctx: TestContext;
let auth: string;
let tenantId: string;
let rcp: string;

beforeAll(async () => {
  redis = await startPrivateRedis();
  ctx = await createTestContext(
    { REDIS_URL: redis.url },
    { idempotency: { inProgressTtlMs: 60_000 } },
  );
  ({ auth, tenantId, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550100',
  }));
});
afterAll(async () => {
  redis?.thaw();
  await ctx?.close();
  await redis?.stop();
});

const post = (key: string) =>
  request(ctx.app)
    .post('/api/v1/calls/outbound')
    .set('Authorization', auth)
    .set('Idempotency-Key', key)
    .send({ receptionist_id: rcp, to: '+14155550123' });

it('a claim that timed out while Redis was frozen does not block the key once it is back', async () => {
  const key = `frozen-${uid()}`;
  redis.freeze();
  let refused: request.Response;
  try {
    refused = await post(key);
  } finally {
    redis.thaw();
  }
  expect(refused.status).toBe(503);
  expect(refused.headers['retry-after']).toBe('1');

  // Redis has now run the late SET NX. The retry must be served well within the marker's
  // 60 s life: by the time Redis answers again the marker is released.
  const served = await waitFor(
    'the key to be usable again',
    async () => {
      const res = await post(key);
      if (res.status === 409) return undefined;
      return res;
    },
    { timeoutMs: 45_000, intervalMs: 200 },
  );
  expect(served.status).toBe(202);
  expect(served.headers['idempotent-replayed']).toBeUndefined();
  expect(await ctx.deps.knex('calls').where({ tenant_id: tenantId })).toHaveLength(1);
}, 90_000);
