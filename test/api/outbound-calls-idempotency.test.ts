import request from 'supertest';
import { idempotencyRedisKey } from '../../apps/api/src/idempotency';
import { createTestContext, type TestContext } from '../support/context';
import { uid } from '../support/fixtures';
import { waitFor } from '../support/worker';
import { addReceptionist, receptionistTenant } from '../support/receptionist';

// Idempotency-Key on POST /api/v1/calls/outbound (docs/API.md, Outbound calls): Redis replays,
// Postgres backstop, and never a second call for one key.
const PATH = '/api/v1/calls/outbound';
const MARKER_TTL_MS = 1500;

/** Crash injection and gating: runs between the Postgres commit and the Redis write. */
let afterCommit: (() => void | Promise<void>) | null = null;

let ctx: TestContext;
let auth: string;
let tenantId: string;
let rcp: string;
let notReady: string;

beforeAll(async () => {
  ctx = await createTestContext(
    {},
    { idempotency: { inProgressTtlMs: MARKER_TTL_MS, afterCommit: () => afterCommit?.() } },
  );
  ({ auth, tenantId, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550100',
  }));
  notReady = await addReceptionist(ctx, tenantId, { name: 'Later', status: 'provisioning' });
});
afterEach(() => {
  afterCommit = null;
});
afterAll(() => ctx.close());

const body = () => ({
  receptionist_id: rcp,
  to: '+14155550123',
  customer_name: 'Dana Whitfield',
  metadata: { crm_id: 'c-42', campaign: 'spring' },
});
const post = (b: object, key: string, as = auth) =>
  request(ctx.app).post(PATH).set('Authorization', as).set('Idempotency-Key', key).send(b);
const callsWithKey = (key: string, tenant = tenantId) =>
  ctx.deps.knex('calls').where({ tenant_id: tenant, idempotency_key: key });
const redisKey = (key: string, tenant = tenantId) =>
  idempotencyRedisKey(ctx.config.queuePrefix, tenant, key);

describe('Idempotency-Key', () => {
  it('a retry with the same body (keys in another order) replays the original response', async () => {
    const key = `order-${uid()}`;
    const first = await post(body(), key);
    expect(first.status).toBe(202);
    const b = body();
    const shuffled = {
      metadata: { campaign: b.metadata.campaign, crm_id: b.metadata.crm_id },
      customer_name: b.customer_name,
      to: b.to,
      receptionist_id: b.receptionist_id,
    };
    const again = await post(shuffled, key);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await callsWithKey(key)).toHaveLength(1);
  });

  it('the same key with another body is a 422 idempotency_key_reused', async () => {
    const key = `reuse-${uid()}`;
    expect((await post(body(), key)).status).toBe(202);
    const res = await post({ ...body(), to: '+12125550199' }, key);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'idempotency_key_reused',
    });
    expect(await callsWithKey(key)).toHaveLength(1);
  });

  it('while the first request runs, a second gets 409 with Retry-After: 1', async () => {
    const key = `busy-${uid()}`;
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    afterCommit = async () => {
      entered();
      await gate;
    };
    const first = post(body(), key).then((r) => r);
    await inside;
    const second = await post(body(), key);
    expect(second.status).toBe(409);
    expect(second.headers['retry-after']).toBe('1');
    expect(second.body.error.code).toBe('idempotency_request_in_progress');
    // Another body under a key in use is a misuse whatever the state: 422.
    expect((await post({ ...body(), to: '+12125550199' }, key)).status).toBe(422);
    release();
    const done = await first;
    expect(done.status).toBe(202);
    const third = await post(body(), key);
    expect(third.status).toBe(202);
    expect(third.body.id).toBe(done.body.id);
    expect(third.headers['idempotent-replayed']).toBe('true');
    expect(await callsWithKey(key)).toHaveLength(1);
  });

  it('is scoped to the tenant: one key in two tenants makes two calls', async () => {
    const key = `shared-${uid()}`;
    const { rcp: theirRcp, ...other } = await receptionistTenant(ctx, {
      scopes: ['write'],
      name: 'Theirs',
      phoneNumber: '+14155550111',
    });
    const mine = await post(body(), key);
    const theirs = await post({ ...body(), receptionist_id: theirRcp }, key, other.auth);
    expect([mine.status, theirs.status]).toEqual([202, 202]);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(redisKey(key)).not.toBe(redisKey(key, other.tenantId));
    expect(await callsWithKey(key, other.tenantId)).toHaveLength(1);
  });

  it('a failed request is not stored: the key works for the corrected retry', async () => {
    const key = `fix-${uid()}`;
    const invalid = await post({ ...body(), to: '+1415555012' }, key);
    expect(invalid.status).toBe(400);
    const tooEarly = await post({ ...body(), receptionist_id: notReady }, key);
    expect(tooEarly.status).toBe(409);
    expect(tooEarly.body.error.code).toBe('receptionist_not_ready');
    const missing = await post({ ...body(), receptionist_id: 'rcp_nope' }, key);
    expect(missing.status).toBe(404);
    expect(await ctx.redis.exists(redisKey(key))).toBe(0);
    const fixed = await post(body(), key);
    expect(fixed.status).toBe(202);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
  });

  it('after the Redis entry expired, Postgres still returns the original call', async () => {
    const key = `expired-${uid()}`;
    const first = await post(body(), key);
    expect(await ctx.redis.pttl(redisKey(key))).toBeGreaterThan(23 * 3600 * 1000);
    await ctx.redis.pexpire(redisKey(key), 1);
    await waitFor('the entry to expire', async () => (await ctx.redis.exists(redisKey(key))) === 0);
    const again = await post(body(), key);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await callsWithKey(key)).toHaveLength(1);
    // The fingerprint is in Postgres too: another body is refused without Redis' help.
    await ctx.redis.del(redisKey(key));
    expect((await post({ ...body(), customer_name: 'Someone Else' }, key)).status).toBe(422);
  });

  it('a crash between the Postgres commit and the Redis write never makes a second call', async () => {
    const key = `crash-${uid()}`;
    afterCommit = () => {
      throw new Error('injected crash after commit');
    };
    const crashed = await post(body(), key);
    expect(crashed.status).toBe(500);
    afterCommit = null;
    const [original] = await callsWithKey(key);
    expect(original).toBeDefined();
    // Like after a real crash, the in-progress marker outlives the request for a moment...
    expect((await post(body(), key)).status).toBe(409);
    // ...then the retry is answered from Postgres with the call the crashed request made.
    const retried = await waitFor(
      'the marker to expire',
      async () => {
        const res = await post(body(), key);
        return res.status === 409 ? undefined : res;
      },
      { timeoutMs: MARKER_TTL_MS + 5000, intervalMs: 100 },
    );
    expect(retried.status).toBe(202);
    expect(retried.body.id).toBe(original.id);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(await callsWithKey(key)).toHaveLength(1);
    // And the replay is in Redis again for the next retry.
    expect((await post(body(), key)).headers['idempotent-replayed']).toBe('true');
  });
});
