import request from 'supertest';
import { webhookSecretContext } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { fakeLookup, READ_SHAPE_KEYS, SIGNING_SECRET } from '../support/webhooks';

// PATCH /webhooks/{id}, Idempotency-Key on POST /webhooks and rotate-secret, at the API:
// shapes, checks and what is stored. Delivery behaviour is in test/worker/webhooks-edit.
const lookup = fakeLookup({
  'public.example.test': ['93.184.215.14'],
  'internal.example.test': ['10.1.2.3'],
});
let ctx: TestContext;
let auth: string;
let tenantId: string;
let otherAuth: string;

beforeAll(async () => {
  ctx = await createTestContext(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' },
    { webhookLookup: lookup },
  );
  ({ auth, tenantId } = await ctx.tenant(['admin']));
  ({ auth: otherAuth } = await ctx.tenant(['admin']));
});
afterAll(() => ctx.close());

const URL_A = 'https://public.example.test/a';
const create = (body: object, key?: string) => {
  const r = request(ctx.app).post('/api/v1/webhooks').set('Authorization', auth);
  if (key) r.set('Idempotency-Key', key);
  return r.send(body);
};
const patch = (id: string, body: unknown, as = auth) =>
  request(ctx.app)
    .patch(`/api/v1/webhooks/${id}`)
    .set('Authorization', as)
    .send(body as object);
const rotate = (id: string, body: object = {}) =>
  request(ctx.app)
    .post(`/api/v1/webhooks/${id}/rotate-secret`)
    .set('Authorization', auth)
    .send(body);

describe('PATCH /api/v1/webhooks/{id}', () => {
  it('changes url, events, description and rate limit; answers the read shape', async () => {
    const { body: made } = await create({ url: URL_A });
    expect(made.rate_limit_per_second).toBeNull();
    expect(made.secret_overlap_ends_at).toBeNull();
    const res = await patch(made.id, {
      url: 'https://public.example.test/b',
      events: ['call.completed', 'call.completed', 'sms.received'],
      description: 'new',
      rate_limit_per_second: 25,
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(READ_SHAPE_KEYS);
    expect(res.body).toMatchObject({
      url: 'https://public.example.test/b',
      events: ['call.completed', 'sms.received'],
      description: 'new',
      rate_limit_per_second: 25,
      is_active: true,
    });
    const back = await patch(made.id, { rate_limit_per_second: null, description: null });
    expect(back.body).toMatchObject({ rate_limit_per_second: null, description: null });
  });

  it('pauses with disabled_reason manual and resumes with a zeroed failure counter', async () => {
    const { body: made } = await create({ url: URL_A });
    await ctx.deps.knex('webhook_subscriptions').where({ id: made.id }).update({
      consecutive_failures: 7,
    });
    const paused = await patch(made.id, { is_active: false });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ is_active: false, disabled_reason: 'manual' });
    expect(paused.body.disabled_at).not.toBeNull();
    const resumed = await patch(made.id, { is_active: true });
    expect(resumed.body).toMatchObject({
      is_active: true,
      disabled_reason: null,
      disabled_at: null,
      consecutive_failures: 0,
    });
  });

  it('refuses bad input with 400: empty, unknown field, bad url, private url, bad rate', async () => {
    const { body: made } = await create({ url: URL_A });
    const cases: [unknown, string][] = [
      [{}, ''],
      [{ secret: 'x' }, ''],
      [{ url: 'http://public.example.test/a' }, 'url'],
      [{ url: 'https://user:pw@public.example.test/a' }, 'url'],
      [{ url: 'https://internal.example.test/a' }, 'url'],
      [{ url: 'https://nowhere.example.test/a' }, 'url'],
      [{ rate_limit_per_second: 0 }, 'rate_limit_per_second'],
      [{ rate_limit_per_second: 1001 }, 'rate_limit_per_second'],
      [{ is_active: 'no' }, 'is_active'],
      [{ events: ['Not An Event'] }, 'events'],
    ];
    for (const [body, param] of cases) {
      const res = await patch(made.id, body);
      expect([res.status, res.body.error?.type]).toEqual([400, 'invalid_request_error']);
      if (param) expect(String(res.body.error.param)).toContain(param);
    }
    const still = await request(ctx.app)
      .get(`/api/v1/webhooks/${made.id}`)
      .set('Authorization', auth);
    expect(still.body.url).toBe(URL_A);
  });

  it("is a 404 for another tenant's subscription, which stays unchanged", async () => {
    const { body: made } = await create({ url: URL_A });
    const res = await patch(made.id, { is_active: false }, otherAuth);
    expect(res.status).toBe(404);
    const row = await ctx.deps.knex('webhook_subscriptions').where({ id: made.id }).first();
    expect(row.is_active).toBe(true);
  });
});

describe('Idempotency-Key on POST /api/v1/webhooks', () => {
  it('replays the same 201 with the secret, creates one subscription, never keeps the secret in Redis', async () => {
    const key = `k-${Date.now()}`;
    const first = await create({ url: URL_A, description: 'idem' }, key);
    const again = await create({ description: 'idem', url: URL_A }, key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body).toEqual(first.body);
    expect(again.body.signing_secret).toMatch(SIGNING_SECRET);
    expect(again.headers.location).toBe(first.headers.location);
    const rows = await ctx.deps.knex('webhook_subscriptions').where({ idempotency_key: key });
    expect(rows).toHaveLength(1);
    const keys = await ctx.redis.keys(`${ctx.config.queuePrefix}:idem:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      const value = (await ctx.redis.get(k)) ?? '';
      expect(value).not.toContain(first.body.signing_secret);
    }
  });

  it('replays from Postgres when Redis forgot the key, with the secret decrypted', async () => {
    const key = `pg-${Date.now()}`;
    const first = await create({ url: URL_A }, key);
    for (const k of await ctx.redis.keys(`${ctx.config.queuePrefix}:idem:*`)) {
      await ctx.redis.del(k);
    }
    const again = await create({ url: URL_A }, key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.signing_secret).toBe(first.body.signing_secret);
  });

  it('answers 422 for another body under the same key', async () => {
    const key = `reuse-${Date.now()}`;
    expect((await create({ url: URL_A }, key)).status).toBe(201);
    const res = await create({ url: 'https://public.example.test/other' }, key);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('idempotency_key_reused');
  });
});

describe('POST /api/v1/webhooks/{id}/rotate-secret', () => {
  const sealed = async (id: string) => ctx.deps.knex('webhook_subscriptions').where({ id }).first();

  it('returns a new secret once, keeps the previous one until the overlap ends', async () => {
    const { body: made } = await create({ url: URL_A });
    const sent = Date.now();
    const res = await rotate(made.id, { overlap_seconds: 3600 });
    const answered = Date.now();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ['_warning', 'id', 'previous_secret_expires_at', 'signing_secret'].sort(),
    );
    expect(res.body.signing_secret).toMatch(SIGNING_SECRET);
    expect(res.body.signing_secret).not.toBe(made.signing_secret);
    const ends = Date.parse(res.body.previous_secret_expires_at);
    // An hour after the rotation, which happened between sending and the answer (a second
    // for the clock's rounding).
    expect(ends).toBeGreaterThanOrEqual(sent + 3600_000 - 1000);
    expect(ends).toBeLessThanOrEqual(answered + 3600_000 + 1000);
    const row = await sealed(made.id);
    const context = webhookSecretContext(tenantId, made.id);
    expect(ctx.deps.secretBox.decrypt(row.secret_ciphertext, context)).toBe(
      res.body.signing_secret,
    );
    expect(ctx.deps.secretBox.decrypt(row.previous_secret_ciphertext, context)).toBe(
      made.signing_secret,
    );
    const read = await request(ctx.app)
      .get(`/api/v1/webhooks/${made.id}`)
      .set('Authorization', auth);
    expect(read.body.secret_overlap_ends_at).toBe(res.body.previous_secret_expires_at);
    expect(JSON.stringify(read.body)).not.toContain('whsec_');
  });

  it('defaults to 24 h; a rotation during an overlap drops the older secret at once', async () => {
    const { body: made } = await create({ url: URL_A });
    const sent = Date.now();
    const second = await rotate(made.id);
    const answered = Date.now();
    // A day after the rotation, which happened between sending and the answer (a second for
    // the clock's rounding).
    const ends = Date.parse(second.body.previous_secret_expires_at);
    expect(ends).toBeGreaterThanOrEqual(sent + 86_400_000 - 1000);
    expect(ends).toBeLessThanOrEqual(answered + 86_400_000 + 1000);
    const third = await rotate(made.id, { overlap_seconds: 60 });
    const row = await sealed(made.id);
    const context = webhookSecretContext(tenantId, made.id);
    expect(ctx.deps.secretBox.decrypt(row.secret_ciphertext, context)).toBe(
      third.body.signing_secret,
    );
    expect(ctx.deps.secretBox.decrypt(row.previous_secret_ciphertext, context)).toBe(
      second.body.signing_secret,
    );
  });

  it('with overlap 0 drops the previous secret now', async () => {
    const { body: made } = await create({ url: URL_A });
    const res = await rotate(made.id, { overlap_seconds: 0 });
    expect(res.body.previous_secret_expires_at).toBeNull();
    expect((await sealed(made.id)).previous_secret_ciphertext).toBeNull();
  });

  it('refuses overlap_seconds out of range (400) and unknown subscriptions (404)', async () => {
    const { body: made } = await create({ url: URL_A });
    for (const overlap of [-1, 604801, 1.5, 'x']) {
      const res = await rotate(made.id, { overlap_seconds: overlap });
      expect([res.status, res.body.error?.param]).toEqual([400, 'overlap_seconds']);
    }
    expect((await rotate('6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b')).status).toBe(404);
  });
});
