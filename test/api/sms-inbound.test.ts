import request from 'supertest';
import { validateEventData } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { messages } from '../support/fixtures';
import { receptionistTenant } from '../support/receptionist';

// Inbound SMS through telephony ingestion (docs/API.md, SMS and Telephony ingestion): stored as
// received, sms.received with is_opt_out, the per-tenant opt-out list, replays, bad targets.
const INGEST = '/internal/v1/telephony/events';
const RCP_PHONE = '+14155550199';

let ctx: TestContext;
let tenantId: string;
let auth: string;
let rcp: string;

beforeAll(async () => {
  ctx = await createTestContext();
  ({ tenantId, auth, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: RCP_PHONE,
  }));
});
afterAll(() => ctx.close());

const ingest = (body: object) =>
  request(ctx.app).post(INGEST).set('Authorization', `Bearer ${ctx.config.ingestToken}`).send(body);
const inbound = (message: string, opts: Parameters<typeof messages.smsInbound>[3] = {}) =>
  messages.smsInbound(rcp, RCP_PHONE, message, opts);
const received = async (from: string) =>
  (await ctx.deps.stores.events.listForTenant(tenantId)).filter(
    (e) => e.type === 'sms.received' && e.data.from === from,
  );
const send = (to: string) =>
  request(ctx.app)
    .post('/api/v1/sms/send')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to, message: 'Your appointment is confirmed.' });

describe('inbound SMS', () => {
  it('is stored as received and emits sms.received of the spec shape', async () => {
    const msg = inbound('Hi, can I move my booking to Friday? 😀', {
      from: '+14155550101',
      at: '2026-11-21T10:15:00.123Z',
    });
    const res = await ingest(msg);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true });

    const [event, more] = await received('+14155550101');
    expect(more).toBeUndefined();
    expect(event?.receptionistId).toBe(rcp);
    expect(validateEventData('sms.received', event?.data)).toBeNull();
    const smsId = event?.data.sms_id as string;
    expect(event?.data).toEqual({
      sms_id: smsId,
      from: '+14155550101',
      to: RCP_PHONE,
      message: 'Hi, can I move my booking to Friday? 😀',
      received_at: '2026-11-21T10:15:00.123Z',
      is_opt_out: false,
    });
    const detail = await request(ctx.app).get(`/api/v1/sms/${smsId}`).set('Authorization', auth);
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({
      id: smsId,
      direction: 'inbound',
      status: 'received',
      receptionist_id: rcp,
      from: '+14155550101',
      to: RCP_PHONE,
      message: 'Hi, can I move my booking to Friday? 😀',
      segments: 1,
      campaign_id: null,
      error_code: null,
      error_message: null,
      metadata: {},
      created_at: expect.stringMatching(/Z$/),
      send_at: null,
      sent_at: null,
      delivered_at: null,
      received_at: '2026-11-21T10:15:00.123Z',
      livemode: true,
    });
  });

  it('a replayed message id is 200 duplicate and stores nothing more', async () => {
    const msg = inbound('See you then', { from: '+14155550102' });
    expect((await ingest(msg)).status).toBe(202);
    const replay = await ingest(msg);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ accepted: false, duplicate: true });
    // The carrier reporting the same message again under a new message id: also a duplicate.
    const again = await ingest({ ...msg, id: `${msg.id}-retry` });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ accepted: false, duplicate: true });
    expect(await ctx.deps.knex('sms_messages').where({ from_number: '+14155550102' })).toHaveLength(
      1,
    );
    expect(await received('+14155550102')).toHaveLength(1);
  });

  it('text Postgres cannot store is made safe: NUL removed, unpaired surrogates replaced', async () => {
    // The validation layer refuses NUL in every text field; the carrier's text is made safe
    // before it, because refusing a text the customer already sent would lose it.
    const res = await ingest(inbound('ST\u0000OP', { from: '+14155550103' }));
    expect(res.status).toBe(202);
    const bad = await ingest(inbound('broken \uD83D here', { from: '+14155550104' }));
    expect(bad.status).toBe(202);
    const [stop] = await received('+14155550103');
    expect(stop?.data).toMatchObject({ message: 'STOP', is_opt_out: true });
    const [broken] = await received('+14155550104');
    expect(broken?.data.message).toBe('broken \uFFFD here');
    // What is stored and served is the safe text too (and STOP opted the sender out).
    const stored = await request(ctx.app)
      .get(`/api/v1/sms/${stop?.data.sms_id as string}`)
      .set('Authorization', auth);
    expect(stored.body).toMatchObject({ message: 'STOP', segments: 1 });
    expect((await send('+14155550103')).status).toBe(422);
    // Only the message text is carrier text: NUL in any other field is still a 400.
    const nulId = await ingest({
      ...inbound('Hello', { from: '+14155550106' }),
      provider_message_id: 'SM\u0000x',
    });
    expect(nulId.status).toBe(400);
    expect(nulId.body.error).toMatchObject({
      code: 'invalid_parameter',
      param: 'provider_message_id',
    });
  });

  it('counts length in code points and segments as UCS-2 code units', async () => {
    const emoji = '😀'.repeat(1600);
    expect((await ingest(inbound(emoji, { from: '+14155550105' }))).status).toBe(202);
    const row = await ctx.deps.knex('sms_messages').where({ from_number: '+14155550105' }).first();
    expect(row.segments).toBe(49); // 3200 code units; 33 emoji fit a 67-unit part: ⌈1600 / 33⌉
    const tooLong = await ingest(inbound('x'.repeat(1601)));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: 'invalid_parameter', param: 'message' });
  });

  it('a number the receptionist does not own is a 422 naming `to`', async () => {
    const res = await ingest(messages.smsInbound(rcp, '+14155550188', 'Hello?'));
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'unknown_receptionist', param: 'to' });
    // Nothing was recorded: the same message may come again once the number is right.
    expect(await ctx.deps.knex('sms_messages').where({ to_number: '+14155550188' })).toHaveLength(
      0,
    );
  });

  it('an unknown receptionist is a 422 naming receptionist_id', async () => {
    const res = await ingest(messages.smsInbound('rcp_doesnotexist', RCP_PHONE, 'Hello?'));
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: 'unknown_receptionist',
      param: 'receptionist_id',
    });
  });

  it.each([
    ['missing message', { message: undefined }, 'message'],
    ['bad from', { from: '0415 555 0100' }, 'from'],
    ['unknown field', { media_url: 'https://x' }, 'media_url'],
  ])('%s → 400 naming the field', async (_name, patch, param) => {
    const res = await ingest({ ...inbound('Hi'), ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param });
  });
});

describe('opt-out keywords', () => {
  it('STOP opts the sender out of the tenant: the next send is refused, nothing stored', async () => {
    const phone = '+14155550110';
    expect((await send(phone)).status).toBe(202);
    expect((await ingest(inbound('  Stop\n', { from: phone }))).status).toBe(202);
    const [event] = await received(phone);
    expect(event?.data).toMatchObject({ message: '  Stop\n', is_opt_out: true });

    const before = await ctx.deps.knex('sms_messages').where({ to_number: phone }).count();
    const refused = await send(phone);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'recipient_opted_out',
      param: 'to',
    });
    expect(await ctx.deps.knex('sms_messages').where({ to_number: phone }).count()).toEqual(before);

    // Another tenant's customer list is its own.
    const { rcp: otherRcp, ...other } = await receptionistTenant(ctx, {
      scopes: ['write'],
      name: 'Elsewhere',
      phoneNumber: '+14155550177',
    });
    const elsewhere = await request(ctx.app)
      .post('/api/v1/sms/send')
      .set('Authorization', other.auth)
      .send({ receptionist_id: otherRcp, to: phone, message: 'Hello' });
    expect(elsewhere.status).toBe(202);

    // START opts back in.
    expect((await ingest(inbound('START', { from: phone }))).status).toBe(202);
    const [, start] = await received(phone);
    expect(start?.data).toMatchObject({ message: 'START', is_opt_out: false });
    expect((await send(phone)).status).toBe(202);
  });

  it.each(['STOPALL', 'unsubscribe', 'Cancel', 'END', 'quit'])('%s opts out', async (word) => {
    const phone = `+1415555${String(2000 + word.length * 7 + word.charCodeAt(0)).slice(0, 4)}`;
    await ingest(inbound(word, { from: phone }));
    expect((await send(phone)).status).toBe(422);
  });

  it('a keyword inside a sentence is an ordinary message', async () => {
    const phone = '+14155550111';
    await ingest(inbound('Please stop calling me after 6pm', { from: phone }));
    const [event] = await received(phone);
    expect(event?.data.is_opt_out).toBe(false);
    expect((await send(phone)).status).toBe(202);
  });

  it('UNSTOP and YES opt back in too', async () => {
    for (const word of ['UNSTOP', 'yes']) {
      const phone = word === 'yes' ? '+14155550112' : '+14155550113';
      await ingest(inbound('STOP', { from: phone, at: '2026-11-21T10:00:00.000Z' }));
      expect((await send(phone)).status).toBe(422);
      await ingest(inbound(word, { from: phone, at: '2026-11-21T10:01:00.000Z' }));
      expect((await send(phone)).status).toBe(202);
    }
  });

  it('keywords applied out of order leave the consent of the latest one', async () => {
    const phone = '+14155550114';
    // START sent at 10:05 arrives first, the STOP sent at 10:00 after it: still opted in.
    await ingest(inbound('START', { from: phone, at: '2026-11-21T10:05:00.000Z' }));
    await ingest(inbound('STOP', { from: phone, at: '2026-11-21T10:00:00.000Z' }));
    expect((await send(phone)).status).toBe(202);
    // A later STOP wins.
    await ingest(inbound('STOP', { from: phone, at: '2026-11-21T10:10:00.000Z' }));
    expect((await send(phone)).status).toBe(422);
  });
});
