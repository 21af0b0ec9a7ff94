import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { messages, uid } from '../support/fixtures';
import { receptionistTenant } from '../support/receptionist';

// Odd input is a 400 with the contract's error body, never a 500 (docs/API.md, Basics
// and Errors): NUL characters in any text (values and object keys, body, query and path), a corrupt
// compressed body, and timestamps that pass a date-time pattern but name no real instant.
const NUL = '\u0000';
const INGEST = '/internal/v1/telephony/events';

let ctx: TestContext;
let auth: string;
let rcp: string;

beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth, rcp } = await receptionistTenant(ctx, { phoneNumber: '+14155550100' }));
});
afterAll(() => ctx.close());

const expect400 = (res: request.Response, param: string) => {
  expect(res.status).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.error).toMatchObject({
    type: 'invalid_request_error',
    code: 'invalid_parameter',
    param,
  });
  expect(res.body.error.message).not.toContain(NUL);
};

describe('NUL characters are refused everywhere, by the validation layer', () => {
  const call = (patch: object) => ({ receptionist_id: rcp, to: '+14155550123', ...patch });

  it.each([
    ['customer_name', { customer_name: `Dana${NUL}` }, 'customer_name'],
    ['purpose', { purpose: `boiler${NUL}quote` }, 'purpose'],
    ['a metadata value', { metadata: { crm: `c${NUL}42` } }, 'metadata.crm'],
    ['a metadata key', { metadata: { [`cr${NUL}m`]: 'c-42' } }, 'metadata'],
    ['an unknown field name', { [`x${NUL}`]: 'y' }, 'body'],
  ])('POST /calls/outbound with NUL in %s → 400', async (_what, patch, param) => {
    const res = await request(ctx.app)
      .post('/api/v1/calls/outbound')
      .set('Authorization', auth)
      .send(call(patch));
    expect400(res, param);
  });

  it('an Idempotency-Keyed request with NUL is refused before anything is stored', async () => {
    const res = await request(ctx.app)
      .post('/api/v1/calls/outbound')
      .set('Authorization', auth)
      .set('Idempotency-Key', `nul-${uid()}`)
      .send(call({ customer_name: `Dana${NUL}` }));
    expect400(res, 'customer_name');
  });

  it.each([
    ['name', { name: `Front${NUL}Desk` }],
    ['greeting', { greeting: `Hello${NUL}` }],
    ['webhook_url', { webhook_url: `https://127.0.0.1/${NUL}` }],
  ])('PATCH /receptionists/{id} with NUL in %s → 400', async (param, body) => {
    const res = await request(ctx.app)
      .patch(`/api/v1/receptionists/${rcp}`)
      .set('Authorization', auth)
      .send(body);
    expect400(res, param);
  });

  it.each([
    ['description', { url: 'https://127.0.0.1/hook', description: `ops${NUL}` }],
    ['url', { url: `https://127.0.0.1/ho${NUL}ok` }],
    ['events.0', { url: 'https://127.0.0.1/hook', events: [`call.started${NUL}`] }],
  ])('POST /webhooks with NUL in %s → 400', async (param, body) => {
    const res = await request(ctx.app)
      .post('/api/v1/webhooks')
      .set('Authorization', auth)
      .send(body);
    expect400(res, param);
  });

  it('a query parameter with NUL → 400 naming it', async () => {
    const res = await request(ctx.app)
      .get(`/api/v1/calls?cursor=abc%00def`)
      .set('Authorization', auth);
    expect400(res, 'cursor');
  });

  it('a path parameter with NUL → 400 naming it', async () => {
    const res = await request(ctx.app)
      .get(`/api/v1/receptionists/${rcp}%00/calls`)
      .set('Authorization', auth);
    expect400(res, 'id');
  });

  it.each([
    ['customer_name', (m: Record<string, unknown>) => ({ ...m, customer_name: `Dana${NUL}` })],
    ['id', (m: Record<string, unknown>) => ({ ...m, id: `msg${NUL}` })],
    ['provider_call_id', (m: Record<string, unknown>) => ({ ...m, provider_call_id: `p${NUL}` })],
  ])('telephony ingestion with NUL in %s → 400', async (param, patch) => {
    const msg = patch(messages.started(rcp, uid(), '2026-11-21T10:00:00.000Z'));
    const res = await request(ctx.app)
      .post(INGEST)
      .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
      .send(msg);
    expect400(res, param);
  });

  it('telephony ingestion with NUL in a transcript turn → 400 naming the turn', async () => {
    const msg = messages.ended(rcp, uid(), '2026-11-21T10:00:00.000Z', '2026-11-21T10:01:00.000Z');
    msg.transcript = {
      ...msg.transcript,
      turns: [{ role: 'customer', text: `hi${NUL}`, offset_seconds: 1 }],
    };
    const res = await request(ctx.app)
      .post(INGEST)
      .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
      .send(msg);
    expect400(res, 'transcript.turns.0.text');
  });
});

describe('text that is not well-formed Unicode (a lone surrogate) is refused too', () => {
  // JSON can spell a lone surrogate (\ud800); it is no character, and Postgres refuses it in
  // jsonb (a 500 at the insert) or stores U+FFFD in its place in text (silent corruption).
  const LONE = '\ud800';
  it.each([
    ['a metadata value', { metadata: { crm: `c${LONE}` } }, 'metadata.crm'],
    ['a metadata key', { metadata: { [`k${LONE}`]: 'v' } }, 'metadata'],
    ['customer_name', { customer_name: `Dana${LONE}` }, 'customer_name'],
  ])('POST /calls/outbound with one in %s → 400', async (_what, patch, param) => {
    const res = await request(ctx.app)
      .post('/api/v1/calls/outbound')
      .set('Authorization', auth)
      .send({ receptionist_id: rcp, to: '+14155550123', ...patch });
    expect400(res, param);
    expect(res.body.error.message).toMatch(/Unicode/);
  });

  it('telephony ingestion with one in the transcript summary → 400', async () => {
    const msg = messages.ended(rcp, uid(), '2026-11-21T10:00:00.000Z', '2026-11-21T10:01:00.000Z');
    msg.transcript = { ...msg.transcript, summary: `booked${LONE}` };
    const res = await request(ctx.app)
      .post(INGEST)
      .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
      .send(msg);
    expect400(res, 'transcript.summary');
  });

  it('a surrogate pair (an emoji) is ordinary text', async () => {
    const res = await request(ctx.app)
      .post('/api/v1/calls/outbound')
      .set('Authorization', auth)
      .send({ receptionist_id: rcp, to: '+14155550123', metadata: { mood: '😀' } });
    expect(res.status).toBe(202);
  });
});

describe('timestamps that name no instant', () => {
  it.each([['occurred_at'], ['started_at'], ['answered_at']])(
    'a leap second (23:59:60) in %s of call.ended → 400',
    async (field) => {
      const msg: Record<string, unknown> = messages.ended(
        rcp,
        uid(),
        '2026-06-30T23:50:00.000Z',
        '2026-06-30T23:58:00.000Z',
      );
      msg[field] = '2026-06-30T23:59:60Z';
      const res = await request(ctx.app)
        .post(INGEST)
        .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
        .send(msg);
      expect400(res, field);
    },
  );

  it('an ordinary timestamp on the same day is accepted', async () => {
    const msg = messages.started(rcp, uid(), '2026-06-30T23:59:59.999Z');
    const res = await request(ctx.app)
      .post(INGEST)
      .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
      .send(msg);
    expect(res.status).toBe(202);
  });
});

describe('compressed bodies', () => {
  const body = JSON.stringify({ name: 'Reception' });
  const patch = (encoding: string, payload: Buffer) =>
    request(ctx.app)
      .patch(`/api/v1/receptionists/${rcp}`)
      .set('Authorization', auth)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', encoding)
      .serialize((b: unknown) => b as string)
      .send(payload);

  it.each([
    ['gzip', gzipSync(body)],
    ['deflate', deflateSync(body)],
    ['br', brotliCompressSync(body)],
  ])('a valid %s body is accepted', async (encoding, payload) => {
    const res = await patch(encoding, payload);
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Reception');
  });

  it.each([['gzip'], ['deflate'], ['br']])('a corrupt %s body → 400, not 500', async (encoding) => {
    const res = await patch(encoding, Buffer.from('this is not compressed at all'));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_body' });
    expect(res.body.request_id).toMatch(/^req_/);
  });

  it('a truncated gzip body → 400', async () => {
    const res = await patch('gzip', gzipSync(body).subarray(0, 12));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_body');
  });
});

describe('deeply nested bodies', () => {
  it('a body nested 100,000 levels deep is a 400, not a stack overflow', async () => {
    const depth = 100_000;
    const deep = `{"receptionist_id":"${'rcp_x'}","to":"+14155550123","metadata":{"a":${'['.repeat(depth)}"x${'\\u0000'}"${']'.repeat(depth)}}}`;
    const res = await request(ctx.app)
      .post('/api/v1/calls/outbound')
      .set('Authorization', auth)
      .set('Content-Type', 'application/json')
      .send(deep);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_parameter');
  });
});
