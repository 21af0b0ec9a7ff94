import request from 'supertest';
import { validateEventData } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { booking, messages, transcript, uid } from '../support/fixtures';
import { receptionistTenant } from '../support/receptionist';

let ctx: TestContext;
let tenantId: string;
let auth: string;
let rcp: string;
const INGEST = '/internal/v1/telephony/events';

beforeAll(async () => {
  ctx = await createTestContext();
  ({ tenantId, auth, rcp } = await receptionistTenant(ctx, { scopes: ['read'] }));
});
afterAll(() => ctx.close());

const ingest = (body: object, token = ctx.config.ingestToken) =>
  request(ctx.app).post(INGEST).set('Authorization', `Bearer ${token}`).send(body);

const eventsOf = async (callId: string) =>
  (await ctx.deps.stores.events.listForTenant(tenantId)).filter((e) => e.data.call_id === callId);

describe('telephony ingestion: authentication and validation', () => {
  it('refuses a missing or wrong token with 401', async () => {
    const msg = messages.started(rcp, uid(), '2026-11-21T10:00:00.000Z');
    const none = await request(ctx.app).post(INGEST).send(msg);
    expect(none.status).toBe(401);
    const wrong = await ingest(msg, 'not-the-token-at-all');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.type).toBe('authentication_error');
    // An API key is not an ingest token.
    const apiKey = await request(ctx.app).post(INGEST).set('Authorization', auth).send(msg);
    expect(apiKey.status).toBe(401);
  });

  it.each([
    ['unknown type', { type: 'call.teleported' }, 'type'],
    [
      'missing field',
      { ...messages.started('rcp_x', 'p', '2026-11-21T10:00:00Z'), provider_call_id: undefined },
      'provider_call_id',
    ],
    [
      'unknown field',
      { ...messages.started('rcp_x', 'p', '2026-11-21T10:00:00Z'), extra: 1 },
      'extra',
    ],
    [
      'bad phone',
      { ...messages.started('rcp_x', 'p', '2026-11-21T10:00:00Z'), from: '555-0100' },
      'from',
    ],
    ['bad time', { ...messages.started('rcp_x', 'p', 'yesterday') }, 'occurred_at'],
    [
      'bad outcome',
      {
        ...messages.ended('rcp_x', 'p', '2026-11-21T10:00:00Z', '2026-11-21T10:01:00Z'),
        outcome: 'great',
      },
      'outcome',
    ],
  ])('%s → 400 naming the field', async (_name, body, param) => {
    const res = await ingest(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param });
  });

  it('an unknown receptionist is a 422', async () => {
    const res = await ingest(
      messages.started('rcp_doesnotexist', uid(), '2026-11-21T10:00:00.000Z'),
    );
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: 'unknown_receptionist',
      param: 'receptionist_id',
    });
  });
});

describe('telephony ingestion: calls and events', () => {
  it('started then ended yields one complete call and two events of the documented shapes', async () => {
    const p = uid();
    const start = await ingest(messages.started(rcp, p, '2026-11-21T10:00:00.123Z'));
    expect(start.status).toBe(202);
    expect(start.body).toEqual({ accepted: true });
    const list = await request(ctx.app).get('/api/v1/calls').set('Authorization', auth);
    const item = list.body.calls.find((c: { status: string }) => c.status === 'in_progress');
    expect(item).toMatchObject({ direction: 'inbound', started_at: '2026-11-21T10:00:00.123Z' });

    const end = await ingest(
      messages.ended(rcp, p, '2026-11-21T10:00:00.123Z', '2026-11-21T10:01:35.123Z'),
    );
    expect(end.status).toBe(202);
    const detail = await request(ctx.app)
      .get(`/api/v1/calls/${item.id}`)
      .set('Authorization', auth);
    expect(detail.body).toMatchObject({
      id: item.id,
      status: 'completed',
      outcome: 'booked',
      duration_seconds: 95,
      end_reason: 'caller_hangup',
      transcript,
      booking,
      has_transcript: true,
      has_recording: true,
      customer_phone: '+14155550100',
      ended_at: '2026-11-21T10:01:35.123Z',
      receptionist_name: 'Front Desk',
      cost: { currency: 'USD', total: 0.42, breakdown: { telephony: 0.12, ai: 0.3, sms: 0 } },
      metadata: {},
    });

    const events = await eventsOf(item.id);
    expect(events.map((e) => e.type)).toEqual(['call.started', 'call.completed']);
    for (const e of events) {
      expect(validateEventData(e.type, e.data)).toBeNull();
      expect(e.receptionistId).toBe(rcp);
    }
    expect(events[0]?.data).toEqual({
      call_id: item.id,
      direction: 'inbound',
      from: '+14155550100',
      to: '+14155550199',
      started_at: '2026-11-21T10:00:00.123Z',
    });
    expect(events[1]?.data).toMatchObject({
      call_id: item.id,
      duration_seconds: 95,
      outcome: 'booked',
      customer_name: 'Dana Whitfield',
      customer_phone: '+14155550100',
      transcript_summary: transcript.summary,
      booking,
      started_at: '2026-11-21T10:00:00.123Z',
      ended_at: '2026-11-21T10:01:35.123Z',
    });
  });

  it('a replayed message is 200 duplicate and changes nothing', async () => {
    const msg = messages.started(rcp, uid(), '2026-11-21T11:00:00.000Z');
    expect((await ingest(msg)).status).toBe(202);
    const before = await ctx.deps.stores.events.listForTenant(tenantId);
    const replay = await ingest(msg);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ accepted: false, duplicate: true });
    expect(await ctx.deps.stores.events.listForTenant(tenantId)).toHaveLength(before.length);
  });

  it('ended before started still yields one complete call', async () => {
    const p = uid();
    expect(
      (await ingest(messages.ended(rcp, p, '2026-11-21T12:00:00.000Z', '2026-11-21T12:01:35.000Z')))
        .status,
    ).toBe(202);
    expect((await ingest(messages.started(rcp, p, '2026-11-21T12:00:00.000Z'))).status).toBe(202);
    const rows = await ctx.deps.knex('calls').where({ provider_call_id: p });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'completed', outcome: 'booked' });
    expect((await eventsOf(rows[0].id)).map((e) => e.type).sort()).toEqual([
      'call.completed',
      'call.started',
    ]);
  });

  it('a second call.ended (new message id) updates the call and emits no second call.completed', async () => {
    const p = uid();
    const first = messages.ended(rcp, p, '2026-11-21T12:30:00.000Z', '2026-11-21T12:31:35.000Z');
    expect((await ingest(first)).status).toBe(202);
    const again = {
      ...messages.ended(rcp, p, '2026-11-21T12:30:00.000Z', '2026-11-21T12:31:40.000Z'),
      duration_seconds: 100,
    };
    expect(again.id).not.toBe(first.id);
    expect((await ingest(again)).status).toBe(202);
    const row = await ctx.deps.knex('calls').where({ provider_call_id: p }).first();
    expect(row.duration_seconds).toBe(100);
    expect((await eventsOf(row.id)).map((e) => e.type)).toEqual(['call.completed']);
    // A late call.missed for an ended call emits nothing either.
    const missed = messages.missed(rcp, p, '2026-11-21T12:30:00.000Z', '2026-11-21T12:31:41.000Z');
    expect((await ingest(missed)).status).toBe(202);
    expect((await eventsOf(row.id)).map((e) => e.type)).toEqual(['call.completed']);
    expect((await ctx.deps.knex('calls').where({ id: row.id }).first()).status).toBe('completed');
  });

  it('started and ended racing each other converge on one call', async () => {
    const p = uid();
    const results = await Promise.all([
      ingest(messages.started(rcp, p, '2026-11-21T13:00:00.000Z')),
      ingest(messages.ended(rcp, p, '2026-11-21T13:00:00.000Z', '2026-11-21T13:01:35.000Z')),
    ]);
    expect(results.map((r) => r.status)).toEqual([202, 202]);
    const rows = await ctx.deps.knex('calls').where({ provider_call_id: p });
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe('completed');
  });

  it('a missed call is stored as missed and emits call.missed', async () => {
    const p = uid();
    const res = await ingest(
      messages.missed(rcp, p, '2026-11-21T14:00:00.000Z', '2026-11-21T14:00:20.000Z'),
    );
    expect(res.status).toBe(202);
    const row = await ctx.deps.knex('calls').where({ provider_call_id: p }).first();
    expect(row).toMatchObject({ status: 'missed', end_reason: 'abandoned', duration_seconds: 20 });
    const [event] = await eventsOf(row.id);
    expect(event?.type).toBe('call.missed');
    expect(event?.data).toEqual({
      call_id: row.id,
      from: '+14155550100',
      to: '+14155550199',
      missed_at: '2026-11-21T14:00:20.000Z',
      recovery_scheduled: true,
    });
  });

  it('busy, no-answer and failed calls end with those statuses', async () => {
    for (const [reason, status] of [
      ['busy', 'busy'],
      ['no_answer', 'no_answer'],
      ['error', 'failed'],
    ]) {
      const p = uid();
      const msg = {
        ...messages.ended(rcp, p, '2026-11-21T15:00:00.000Z', '2026-11-21T15:00:10.000Z'),
        end_reason: reason,
        outcome: 'no_outcome',
      };
      expect((await ingest(msg)).status).toBe(202);
      const row = await ctx.deps.knex('calls').where({ provider_call_id: p }).first();
      expect(row.status).toBe(status);
    }
  });
});
