import request from 'supertest';
import { catalog } from '@switchboard/queues';
import { idempotencyRedisKey } from '../../apps/api/src/idempotency';
import { createTestContext, type TestContext } from '../support/context';
import { uid } from '../support/fixtures';
import { ISO_MS } from '../support/webhooks';

// POST /receptionists and POST /receptionists/{id}/provision without a worker: the 202 and
// its job, every bad input, Idempotency-Key with its Postgres backstop, tenant isolation.
const PATH = '/api/v1/receptionists';
const READ_KEYS = [
  'assistant_id',
  'created_at',
  'error',
  'greeting',
  'id',
  'name',
  'phone_number',
  'plan',
  'provisioned_at',
  'status',
  'webhook_url',
];

let ctx: TestContext;
let auth: string;
let tenantId: string;

beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth, tenantId } = await ctx.tenant(['write']));
});
afterAll(() => ctx.close());

const create = (body: unknown, headers: Record<string, string> = {}) =>
  request(ctx.app)
    .post(PATH)
    .set({ Authorization: auth, ...headers })
    .send(body as object);
const provision = (id: string, as = auth) =>
  request(ctx.app).post(`${PATH}/${id}/provision`).set('Authorization', as);
const jobState = (id: string, round = 1) =>
  ctx.queues.provisioning.getJobState(
    catalog.provisioning.jobId({ v: 1, receptionistId: id, round, attempt: 1 }),
  );

describe('POST /receptionists', () => {
  it('answers 202 with the read shape in provisioning, a Location, and queues attempt 1', async () => {
    const res = await create({ name: 'Front Desk', greeting: 'Hello!', area_code: '415' });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(READ_KEYS);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^rcp_[0-9a-f]{32}$/),
      name: 'Front Desk',
      status: 'provisioning',
      phone_number: null,
      assistant_id: null,
      plan: 'standard',
      greeting: 'Hello!',
      webhook_url: null,
      error: null,
      created_at: expect.stringMatching(ISO_MS),
      provisioned_at: null,
    });
    expect(res.headers.location).toBe(`${PATH}/${res.body.id}`);
    expect(await jobState(res.body.id)).toBe('waiting');
    const got = await request(ctx.app)
      .get(res.headers.location as string)
      .set('Authorization', auth);
    expect(got.body).toEqual(res.body);
  });

  it('a receptionist still provisioning cannot place outbound calls (409)', async () => {
    const { body } = await create({ name: 'Not Yet' });
    const res = await request(ctx.app)
      .post('/api/v1/calls/outbound')
      .set('Authorization', auth)
      .send({ receptionist_id: body.id, to: '+14155550123' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('receptionist_not_ready');
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: 42 }, 'name'],
    [{ name: 'ok', greeting: 'x'.repeat(501) }, 'greeting'],
    [{ name: 'ok', area_code: '41' }, 'area_code'],
    [{ name: 'ok', area_code: '4155' }, 'area_code'],
    [{ name: 'ok', area_code: 'abc' }, 'area_code'],
    [{ name: 'ok', area_code: '041' }, 'area_code'],
    [{ name: 'ok', area_code: 415 }, 'area_code'],
    [{ name: 'ok', plan: 'gold' }, 'plan'],
    [{ name: 'ok', plan: null }, 'plan'],
    [{ name: 'ok', phone_number: '+14155550100' }, 'phone_number'],
    [{ name: 'nul\u0000' }, 'name'],
  ])('%j is a 400 on %s', async (body, param) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param });
  });

  it('PATCH refuses NUL in name and greeting too (400, not a database error)', async () => {
    const { body } = await create({ name: 'Patched' });
    for (const patch of [{ name: 'a\u0000b' }, { greeting: 'hi\u0000' }]) {
      const res = await request(ctx.app)
        .patch(`${PATH}/${body.id}`)
        .set('Authorization', auth)
        .send(patch);
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe(Object.keys(patch)[0]);
    }
  });

  it('names the plans in the error message', async () => {
    const res = await create({ name: 'ok', plan: 'gold' });
    expect(res.body.error.message).toBe('plan must be one of starter, standard, pro');
  });

  it('accepts the longest name and greeting, every plan, area code 999', async () => {
    for (const plan of ['starter', 'standard', 'pro']) {
      const res = await create({
        name: 'n'.repeat(100),
        greeting: 'g'.repeat(500),
        plan,
        area_code: '999',
      });
      expect(res.status).toBe(202);
      expect(res.body.plan).toBe(plan);
    }
  });

  it('needs the write scope', async () => {
    const reader = await ctx.keyFor(tenantId, ['read']);
    const res = await request(ctx.app)
      .post(PATH)
      .set('Authorization', reader.auth)
      .send({ name: 'x' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
  });
});

describe('Idempotency-Key', () => {
  const count = async () =>
    Number(
      ((await ctx.deps.knex('receptionists').where({ tenant_id: tenantId }).count({ n: '*' }))[0]
        ?.n ?? 0) as string,
    );

  it('a retry replays the first answer and creates nothing', async () => {
    const key = { 'Idempotency-Key': `rcp-${uid()}` };
    const first = await create({ name: 'Sales', plan: 'pro' }, key);
    const before = await count();
    const again = await create({ plan: 'pro', name: 'Sales' }, key);
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.body).toEqual(first.body);
    expect(await count()).toBe(before);
  });

  it('another body with the key is a 422', async () => {
    const key = { 'Idempotency-Key': `rcp-${uid()}` };
    await create({ name: 'Sales' }, key);
    const res = await create({ name: 'Support' }, key);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('idempotency_key_reused');
  });

  it('after Redis forgot the key, Postgres still replays it (and still refuses another body)', async () => {
    const keyValue = `rcp-${uid()}`;
    const key = { 'Idempotency-Key': keyValue };
    const first = await create({ name: 'Billing' }, key);
    await ctx.redis.del(idempotencyRedisKey(ctx.config.queuePrefix, tenantId, keyValue));
    const before = await count();
    const again = await create({ name: 'Billing' }, key);
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await count()).toBe(before);
    await ctx.redis.del(idempotencyRedisKey(ctx.config.queuePrefix, tenantId, keyValue));
    expect((await create({ name: 'Other' }, key)).status).toBe(422);
  });

  it('a key on outbound calls and on receptionists are different operations', async () => {
    const keyValue = `shared-${uid()}`;
    await create({ name: 'First' }, { 'Idempotency-Key': keyValue });
    const res = await request(ctx.app)
      .post('/api/v1/calls/outbound')
      .set({ Authorization: auth, 'Idempotency-Key': keyValue })
      .send({ receptionist_id: 'rcp_0', to: '+14155550123' });
    expect(res.status).toBe(422);
  });
});

describe('POST /receptionists/{id}/provision', () => {
  it('is a 409 invalid_state unless the receptionist is in error', async () => {
    const { body } = await create({ name: 'Busy' });
    const res = await provision(body.id);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_state' });
    expect(res.body.error.message).toContain('provisioning');
  });

  it('starts a new round for one in error and queues its first attempt', async () => {
    const { body } = await create({ name: 'Broken', area_code: '999' });
    await ctx.deps.knex('receptionists').where({ id: body.id }).update({
      status: 'error',
      error_code: 'number_unavailable',
      error_message: 'none',
      failed_at: new Date(),
    });
    const failed = await request(ctx.app).get(`${PATH}/${body.id}`).set('Authorization', auth);
    expect(failed.body.error).toMatchObject({ code: 'number_unavailable', message: 'none' });
    const res = await provision(body.id);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: body.id, status: 'provisioning', error: null });
    expect(await jobState(body.id, 2)).toBe('waiting');
    expect((await provision(body.id)).status).toBe(409);
  });

  it("another tenant's receptionist, or none, is a 404; a malformed id a 400", async () => {
    const { body } = await create({ name: 'Mine' });
    const other = await ctx.tenant(['admin']);
    expect((await provision(body.id, other.auth)).status).toBe(404);
    expect((await provision(`rcp_${'0'.repeat(32)}`)).status).toBe(404);
    const bad = await provision('nope');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('id');
  });
});
