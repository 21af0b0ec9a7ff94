import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { ISO_MS } from '../support/webhooks';
import { addReceptionist, receptionistTenant } from '../support/receptionist';

// POST /api/v1/calls/outbound: validation, ownership, readiness, and the 202 (docs/API.md,
// Outbound calls, Idempotency). No worker runs in this file, so accepted calls stay queued.
const PATH = '/api/v1/calls/outbound';
const TO = '+14155550123';
const RCP_PHONE = '+14155550100';

let ctx: TestContext;
let auth: string;
let tenantId: string;
let ready: string;
let provisioning: string;
let otherTenants: string;

beforeAll(async () => {
  ctx = await createTestContext();
  ({
    auth,
    tenantId,
    rcp: ready,
  } = await receptionistTenant(ctx, { scopes: ['write'], phoneNumber: RCP_PHONE }));
  provisioning = await addReceptionist(ctx, tenantId, { name: 'New', status: 'provisioning' });
  const other = await ctx.tenant(['write']);
  otherTenants = await addReceptionist(ctx, other.tenantId, {
    name: 'Theirs',
    phoneNumber: '+14155550111',
  });
});
afterAll(() => ctx.close());

const post = (body: object, headers: Record<string, string> = {}) =>
  request(ctx.app).post(PATH).set('Authorization', auth).set(headers).send(body);

describe('POST /api/v1/calls/outbound: validation', () => {
  it.each([
    ['no plus sign', { to: '14155550123' }, 'to'],
    ['spaces', { to: '+1 415 555 0123' }, 'to'],
    ['too short for its country code (+1)', { to: '+1415555012' }, 'to'],
    ['too long for its country code (+1)', { to: '+141555501234' }, 'to'],
    ['too long for its country code (+44)', { to: '+4420718387501234' }, 'to'],
    ['an unassigned country code', { to: '+999123456789' }, 'to'],
    ['a leading zero after the plus', { to: '+0123456789' }, 'to'],
    ['not a string', { to: 14155550123 }, 'to'],
    ['missing to', { to: undefined }, 'to'],
    ['missing receptionist_id', { receptionist_id: undefined }, 'receptionist_id'],
    ['malformed receptionist_id', { receptionist_id: 'front-desk' }, 'receptionist_id'],
    ['unknown field', { priority: 'high' }, 'priority'],
    ['purpose over 2000 chars', { purpose: 'x'.repeat(2001) }, 'purpose'],
    ['empty customer_name', { customer_name: '' }, 'customer_name'],
    [
      'metadata with 21 keys',
      { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) },
      'metadata',
    ],
    ['a metadata value over 500 chars', { metadata: { note: 'x'.repeat(501) } }, 'metadata.note'],
    ['a metadata value that is not a string', { metadata: { n: 1 } }, 'metadata.n'],
    ['metadata that is not an object', { metadata: ['a'] }, 'metadata'],
  ])('%s → 400 invalid_parameter naming the field', async (_name, patch, param) => {
    const res = await post({ receptionist_id: ready, to: TO, ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_parameter',
      param,
    });
  });

  it.each([
    ['the contract example, in a fictional 555 range', '+15551234567'],
    ['a fictional 555-01XX number', '+14155550123'],
    ['a UK number', '+442071838750'],
    ['a German number', '+4930123456'],
  ])('%s (%s) is accepted: E.164 with a possible length', async (_name, to) => {
    const res = await post({ receptionist_id: ready, to });
    expect(res.status).toBe(202);
    expect(res.body.to).toBe(to);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['not ASCII', 'clé-1'],
  ])('an Idempotency-Key that is %s → 400 naming the header', async (_name, key) => {
    const res = await post({ receptionist_id: ready, to: TO }, { 'Idempotency-Key': key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'Idempotency-Key' });
  });

  it('needs the write scope', async () => {
    const { auth: readOnly } = await ctx.keyFor(tenantId, ['read']);
    const res = await request(ctx.app)
      .post(PATH)
      .set('Authorization', readOnly)
      .send({ receptionist_id: ready, to: TO });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
  });
});

describe('POST /api/v1/calls/outbound: the receptionist', () => {
  it("another tenant's receptionist is a 404, like a missing one", async () => {
    for (const id of [otherTenants, 'rcp_doesnotexist']) {
      const res = await post({ receptionist_id: id, to: TO });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({
        code: 'resource_not_found',
        param: 'receptionist_id',
      });
    }
    expect(await ctx.deps.knex('calls').where({ receptionist_id: otherTenants })).toHaveLength(0);
  });

  it('a receptionist that is not ready is a 409 receptionist_not_ready', async () => {
    const res = await post({ receptionist_id: provisioning, to: TO });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'receptionist_not_ready',
      param: 'receptionist_id',
    });
    expect(await ctx.deps.knex('calls').where({ receptionist_id: provisioning })).toHaveLength(0);
  });
});

describe('POST /api/v1/calls/outbound: 202', () => {
  it('answers the queued call with Location; the row is committed and the dial job added', async () => {
    const before = Date.now();
    const res = await post({
      receptionist_id: ready,
      to: TO,
      customer_name: 'Dana Whitfield',
      purpose: 'p'.repeat(2000),
      metadata: { crm_id: 'c-42', campaign: 'spring' },
    });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual([
      'created_at',
      'customer_name',
      'direction',
      'from',
      'id',
      'livemode',
      'receptionist_id',
      'status',
      'to',
    ]);
    expect(res.body).toMatchObject({
      status: 'queued',
      direction: 'outbound',
      receptionist_id: ready,
      from: RCP_PHONE,
      to: TO,
      customer_name: 'Dana Whitfield',
    });
    expect(res.body.id).toMatch(/^call_[0-9a-f]{32}$/);
    expect(res.body.created_at).toMatch(ISO_MS);
    expect(res.headers.location).toBe(`/api/v1/calls/${res.body.id}`);
    expect(res.headers['idempotent-replayed']).toBeUndefined();

    // Committed before the 202: the detail is there at once, queued, with its metadata.
    const detail = await request(ctx.app)
      .get(`/api/v1/calls/${res.body.id}`)
      .set('Authorization', auth);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      id: res.body.id,
      status: 'queued',
      direction: 'outbound',
      from: RCP_PHONE,
      to: TO,
      customer_name: 'Dana Whitfield',
      outcome: null,
      started_at: res.body.created_at,
      metadata: { crm_id: 'c-42', campaign: 'spring' },
    });
    expect(Date.parse(detail.body.started_at)).toBeGreaterThanOrEqual(before - 5);
    const row = await ctx.deps.knex('calls').where({ id: res.body.id }).first();
    expect(row).toMatchObject({ purpose: 'p'.repeat(2000), idempotency_key: null });

    const job = await ctx.queues.outboundCalls.getJob(res.body.id);
    expect(job?.data).toEqual({
      v: 1,
      callId: res.body.id,
      requestId: res.headers['x-request-id'],
    });
  });

  it('customer_name is null when not given; the /v1 alias answers too', async () => {
    const res = await request(ctx.app)
      .post('/v1/calls/outbound')
      .set('Authorization', auth)
      .send({ receptionist_id: ready, to: '+12125550199' });
    expect(res.status).toBe(202);
    expect(res.body.customer_name).toBeNull();
  });

  it('is in the OpenAPI document with its Idempotency-Key header', async () => {
    const doc = await request(ctx.app).get('/api/v1/openapi.json');
    const op = doc.body.paths['/calls/outbound'].post;
    expect(op['x-required-scope']).toBe('write');
    expect(op.responses['202']).toBeDefined();
    expect(op.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]),
    );
  });
});
