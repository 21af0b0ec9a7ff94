import request from 'supertest';
import type { TestContext } from '../support/context';
import { createTestContext } from '../support/context';
import { messages } from '../support/fixtures';
import { receptionistTenant } from '../support/receptionist';

// Scheduled sends (send_at, DELETE /sms/{id}, release when due or cancel on an opt-out) and
// the opt-out list (GET /sms/opt-outs), through the API and the lifecycle's statements.
const RCP_PHONE = '+14155550500';
let ctx: TestContext;
let auth: string;
let rcp: string;

const send = (body: object) =>
  request(ctx.app)
    .post('/api/v1/sms/send')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, message: 'Reminder: your visit is tomorrow 10:00', ...body });
const cancel = (id: string) =>
  request(ctx.app).delete(`/api/v1/sms/${id}`).set('Authorization', auth);
const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();
const ingest = (body: object) =>
  request(ctx.app)
    .post('/internal/v1/telephony/events')
    .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
    .send(body);

beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: RCP_PHONE,
  }));
});
afterAll(() => ctx?.close());

describe('scheduled sends', () => {
  it('send_at 60 s to 30 days ahead → 202 scheduled, no job; DELETE cancels it (204), then 409', async () => {
    const sendAt = ahead(3_600_000);
    const res = await send({ to: '+14155550511', send_at: sendAt });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'scheduled', send_at: sendAt, sent_at: null });
    expect(await ctx.queues.sms.getJob(res.body.id)).toBeUndefined();
    expect((await cancel(res.body.id)).status).toBe(204);
    const detail = await request(ctx.app)
      .get(`/api/v1/sms/${res.body.id}`)
      .set('Authorization', auth);
    expect(detail.body.status).toBe('cancelled');
    const again = await cancel(res.body.id);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('not_cancellable');
  });

  it('a message that is not scheduled is 409 not_cancellable; an unknown id is 404', async () => {
    const queued = await send({ to: '+14155550512' });
    expect(queued.body.status).toBe('queued');
    expect((await cancel(queued.body.id)).body.error.code).toBe('not_cancellable');
    expect((await cancel('sms_doesnotexist')).status).toBe(404);
  });

  it.each([
    ['in the past', ahead(-60_000)],
    ['under a minute ahead', ahead(10_000)],
    ['beyond 30 days', ahead(31 * 86_400_000)],
    ['not a timestamp', 'tomorrow at ten'],
  ])('send_at %s → 400 on send_at, nothing stored', async (_why, sendAt) => {
    const res = await send({ to: '+14155550513', send_at: sendAt });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'send_at' });
    expect(await ctx.deps.knex('sms_messages').where({ to_number: '+14155550513' })).toEqual([]);
  });

  it('when due it is queued; an opt-out since scheduling cancels it (recipient_opted_out)', async () => {
    const due = await send({ to: '+14155550514', send_at: ahead(120_000) });
    const stopped = await send({ to: '+14155550515', send_at: ahead(120_000) });
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'STOP', { from: '+14155550515' }));
    await ctx.deps
      .knex('sms_messages')
      .whereIn('id', [due.body.id, stopped.body.id])
      .update({ send_at: new Date(Date.now() - 1000) });
    const released = await ctx.deps.knex.transaction((trx) =>
      ctx.deps.stores.smsLifecycle.release(trx, 100),
    );
    const byId = Object.fromEntries(released.map((s) => [s.id, s]));
    expect(byId[due.body.id]).toMatchObject({ status: 'queued', errorCode: null });
    expect(byId[stopped.body.id]).toMatchObject({
      status: 'cancelled',
      errorCode: 'recipient_opted_out',
    });
  });
});

describe('GET /sms/opt-outs', () => {
  it('lists opt-outs newest first with keyword and time, filters by phone, pages', async () => {
    const t0 = Date.parse('2026-11-20T10:00:00.000Z');
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    await ingest(
      messages.smsInbound(rcp, RCP_PHONE, 'unsubscribe', { from: '+14155550521', at: at(1) }),
    );
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'STOP', { from: '+14155550522', at: at(2) }));
    // Opted out then back in: not listed.
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'STOP', { from: '+14155550523', at: at(3) }));
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'START', { from: '+14155550523', at: at(4) }));
    const list = (q: string) =>
      request(ctx.app).get(`/api/v1/sms/opt-outs${q}`).set('Authorization', auth);
    const first = await list('?limit=1');
    expect(first.status).toBe(200);
    const all = [first.body.data[0]];
    let cursor = first.body.cursor as string | null;
    while (cursor) {
      const page = await list(`?limit=1&cursor=${cursor}`);
      all.push(...page.body.data);
      cursor = page.body.cursor;
    }
    const ours = all.filter((o) => o.phone.startsWith('+141555505'));
    expect(ours.map((o) => o.phone)).toEqual(
      expect.arrayContaining(['+14155550522', '+14155550521']),
    );
    expect(ours.map((o) => o.phone)).not.toContain('+14155550523');
    const one = await list('?phone=%2B14155550521');
    expect(one.body.data).toEqual([
      { phone: '+14155550521', keyword: 'UNSUBSCRIBE', opted_out_at: at(1) },
    ]);
    expect((await list('?phone=12345')).status).toBe(400);
  });
});
