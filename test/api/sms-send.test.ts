import request from 'supertest';
import { idempotencyRedisKey } from '../../apps/api/src/idempotency';
import { createTestContext, type TestContext } from '../support/context';
import { uid } from '../support/fixtures';
import { waitFor } from '../support/wait';
import { addReceptionist, receptionistTenant } from '../support/receptionist';

// POST /api/v1/sms/send and GET /api/v1/sms/{id} (docs/API.md, SMS), without a
// worker: validation, ownership, readiness, segments, Idempotency-Key, the queued job.
const PATH = '/api/v1/sms/send';
const RCP_PHONE = '+14155550100';

let ctx: TestContext;
let auth: string;
let tenantId: string;
let rcp: string;
let notReady: string;

beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth, tenantId, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: RCP_PHONE,
  }));
  notReady = await addReceptionist(ctx, tenantId, { name: 'Later', status: 'provisioning' });
});
afterAll(() => ctx.close());

const body = (extra: object = {}) => ({
  receptionist_id: rcp,
  to: '+14155550123',
  message: 'Hi Dana, your boiler service is booked for Tuesday at 09:30.',
  ...extra,
});
const post = (b: object, opts: { key?: string; as?: string } = {}) => {
  const req = request(ctx.app)
    .post(PATH)
    .set('Authorization', opts.as ?? auth);
  if (opts.key) req.set('Idempotency-Key', opts.key);
  return req.send(b);
};
const rowsTo = (to: string) =>
  ctx.deps.knex('sms_messages').where({ tenant_id: tenantId, to_number: to });

describe('POST /sms/send', () => {
  it('answers 202 with the queued message and Location; the row and the job exist', async () => {
    const res = await post(body({ to: '+14155550124', metadata: { crm_id: 'c-42' } }));
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/api/v1/sms/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^sms_[0-9a-f]{32}$/),
      direction: 'outbound',
      status: 'queued',
      receptionist_id: rcp,
      from: RCP_PHONE,
      to: '+14155550124',
      message: body().message,
      segments: 1,
      campaign_id: null,
      error_code: null,
      error_message: null,
      metadata: { crm_id: 'c-42' },
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      send_at: null,
      sent_at: null,
      delivered_at: null,
      received_at: null,
      livemode: true,
    });
    const detail = await request(ctx.app)
      .get(`/api/v1/sms/${res.body.id}`)
      .set('Authorization', auth);
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual(res.body);
    // The add has a Redis budget of its own (the answer never waits past it): on a loaded
    // machine the job may land just after the answer.
    const job = await waitFor('the send job', () => ctx.queues.sms.getJob(res.body.id));
    expect(job?.data).toEqual({ v: 1, smsId: res.body.id, requestId: res.headers['x-request-id'] });
  });

  it.each([
    ['160 GSM-7 characters', 'a'.repeat(160), 1],
    ['161 GSM-7 characters', 'a'.repeat(161), 2],
    ['extension characters count twice', '€'.repeat(81), 2],
    [
      'non-Latin text is UCS-2',
      'Привет! Ваша запись подтверждена на вторник, 9:30. Ждём вас.'.padEnd(71, '.'),
      2,
    ],
    ['emoji are two UCS-2 units', '👍'.repeat(35), 1],
    ['36 emoji', '👍'.repeat(36), 2],
  ])('segments: %s', async (_name, message, segments) => {
    const res = await post(body({ message }));
    expect(res.status).toBe(202);
    expect(res.body.segments).toBe(segments);
  });

  it('counts the 1600-character limit in code points', async () => {
    expect((await post(body({ message: '😀'.repeat(1600) }))).status).toBe(202);
    const over = await post(body({ message: '😀'.repeat(1601) }));
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'invalid_parameter', param: 'message' });
  });

  it.each([
    ['missing to', { to: undefined }, 'to'],
    ['to not E.164', { to: '4155550123' }, 'to'],
    ['to with spaces', { to: '+1 415 555 0123' }, 'to'],
    ['to of an impossible length', { to: '+1415555012' }, 'to'],
    ['missing message', { message: undefined }, 'message'],
    ['empty message', { message: '' }, 'message'],
    ['blank message', { message: ' \n\t ' }, 'message'],
    ['message over 1600 characters', { message: 'x'.repeat(1601) }, 'message'],
    ['message not a string', { message: 42 }, 'message'],
    ['message with NUL', { message: 'STOP\u0000' }, 'message'],
    ['message with an unpaired surrogate', { message: 'bad \uD800 text' }, 'message'],
    ['missing receptionist_id', { receptionist_id: undefined }, 'receptionist_id'],
    ['malformed receptionist_id', { receptionist_id: 'call_123' }, 'receptionist_id'],
    ['an unknown field', { media_url: 'https://example.com/a.png' }, 'media_url'],
    ['metadata with a number', { metadata: { n: 1 } }, 'metadata.n'],
    [
      'metadata over 20 keys',
      { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) },
      'metadata',
    ],
  ])('%s → 400 naming the field', async (_name, patch, param) => {
    const res = await post(body(patch));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_parameter',
      param,
    });
  });

  it("another tenant's receptionist is a 404, like a missing one", async () => {
    const other = await ctx.tenant(['write']);
    for (const as of [other.auth]) {
      const res = await post(body(), { as });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({
        code: 'resource_not_found',
        param: 'receptionist_id',
      });
    }
    const missing = await post(body({ receptionist_id: 'rcp_doesnotexist' }));
    expect(missing.status).toBe(404);
  });

  it('a receptionist that is not ready is a 409 receptionist_not_ready', async () => {
    const res = await post(body({ receptionist_id: notReady, to: '+14155550125' }));
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'receptionist_not_ready',
      param: 'receptionist_id',
    });
    expect(await rowsTo('+14155550125')).toHaveLength(0);
  });

  it('needs the write scope', async () => {
    const reader = await ctx.keyFor(tenantId, ['read']);
    const res = await post(body(), { as: reader.auth });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    expect((await request(ctx.app).post(PATH).send(body())).status).toBe(401);
  });

  it('the /v1 alias answers too, and the route is in the OpenAPI document', async () => {
    const res = await request(ctx.app).post('/v1/sms/send').set('Authorization', auth).send(body());
    expect(res.status).toBe(202);
    const doc = await request(ctx.app).get('/api/v1/openapi.json');
    const op = doc.body.paths['/sms/send'].post;
    expect(op.responses['202']).toBeDefined();
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain('Idempotency-Key');
    expect(doc.body.paths['/receptionists/{id}/sms'].get).toBeDefined();
    expect(doc.body.paths['/sms/{id}'].get).toBeDefined();
  });
});

describe('Idempotency-Key', () => {
  it('a retry with the same body replays the original response; one message', async () => {
    const key = `sms-${uid()}`;
    const first = await post(body({ to: '+14155550130' }), { key });
    expect(first.status).toBe(202);
    const again = await post(body({ to: '+14155550130' }), { key });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await rowsTo('+14155550130')).toHaveLength(1);
  });

  it('the same key with another body is a 422 idempotency_key_reused', async () => {
    const key = `sms-${uid()}`;
    expect((await post(body({ to: '+14155550131' }), { key })).status).toBe(202);
    const res = await post(body({ to: '+14155550131', message: 'Something else' }), { key });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'idempotency_key_reused' });
    expect(await rowsTo('+14155550131')).toHaveLength(1);
  });

  it('Postgres remembers the key when Redis forgot it', async () => {
    const key = `sms-${uid()}`;
    const first = await post(body({ to: '+14155550132' }), { key });
    await ctx.redis.del(idempotencyRedisKey(ctx.config.queuePrefix, tenantId, key));
    const replay = await post(body({ to: '+14155550132' }), { key });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    await ctx.redis.del(idempotencyRedisKey(ctx.config.queuePrefix, tenantId, key));
    const reuse = await post(body({ to: '+14155550132', message: 'Other' }), { key });
    expect(reuse.status).toBe(422);
    expect(await rowsTo('+14155550132')).toHaveLength(1);
  });

  it('a key of an outbound call is not a key of an SMS', async () => {
    const key = `shared-${uid()}`;
    const call = await request(ctx.app)
      .post('/api/v1/calls/outbound')
      .set('Authorization', auth)
      .set('Idempotency-Key', key)
      .send({ receptionist_id: rcp, to: '+14155550133' });
    expect(call.status).toBe(202);
    const res = await post(body({ to: '+14155550133' }), { key });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('idempotency_key_reused');
  });

  it('a failed first request is not stored: the key may be retried', async () => {
    const key = `sms-${uid()}`;
    expect((await post(body({ receptionist_id: notReady }), { key })).status).toBe(409);
    expect((await post(body({ to: '+14155550134' }), { key })).status).toBe(202);
  });
});

describe('GET /sms/{id}', () => {
  it("another tenant's message is a 404; a malformed id a 400", async () => {
    const sent = await post(body());
    const other = await ctx.tenant(['read']);
    const res = await request(ctx.app)
      .get(`/api/v1/sms/${sent.body.id}`)
      .set('Authorization', other.auth);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('resource_not_found');
    const bad = await request(ctx.app).get('/api/v1/sms/call_1').set('Authorization', auth);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_parameter', param: 'id' });
  });

  it('needs a key; read is enough', async () => {
    const sent = await post(body());
    expect((await request(ctx.app).get(`/api/v1/sms/${sent.body.id}`)).status).toBe(401);
    const reader = await ctx.keyFor(tenantId, ['read']);
    const res = await request(ctx.app)
      .get(`/api/v1/sms/${sent.body.id}`)
      .set('Authorization', reader.auth);
    expect(res.status).toBe(200);
  });
});
