import request from 'supertest';
import { simulatorHandoffs, type SmsProvider, type SmsRequest } from '../../apps/worker/src/sms';
import { createTestContext, type TestContext } from '../support/context';
import { receptionistTenant } from '../support/receptionist';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';

// Test mode for SMS, leads and campaigns (docs/API.md, Test mode; decision 0117), with a
// "production carrier" configured: a test key's texts (its campaigns' included) go to the
// simulated carrier and get its receipts, carry livemode false with their events, count in
// no usage; each mode sees only its own messages, leads, imports and campaigns; a test
// campaign reaches test leads only; DELETE /test-data removes them and leaves live data.
const RCP_PHONE = '+14155550100';
const SHARED_PHONE = '+14155550140';

/** The production carrier: records what it is handed, accepts it, never sends a receipt. */
const carried: string[] = [];
const carrier: SmsProvider = {
  name: 'carrier',
  async send(req: SmsRequest) {
    carried.push(req.smsId);
    return { status: 'accepted', providerMessageId: `carrier_${req.smsId}` };
  },
  close: async () => undefined,
};

let ctx: TestContext;
let worker: TestWorker;
let tenantId: string;
let rcp: string;
let live: string;
let test: string;

const as = (auth: string) => ({
  get: (path: string) => request(ctx.app).get(`/api/v1${path}`).set('Authorization', auth),
  post: (path: string, body: object) =>
    request(ctx.app).post(`/api/v1${path}`).set('Authorization', auth).send(body),
  patch: (path: string, body: object) =>
    request(ctx.app).patch(`/api/v1${path}`).set('Authorization', auth).send(body),
  delete: (path: string) => request(ctx.app).delete(`/api/v1${path}`).set('Authorization', auth),
  csv: (body: string) =>
    request(ctx.app)
      .post('/api/v1/leads/import')
      .set('Authorization', auth)
      .set('Content-Type', 'text/csv')
      .send(body),
});
const smsIn = async (auth: string, status: string, id: string) =>
  waitFor(`SMS ${id} ${status}`, async () => {
    const res = await as(auth).get(`/sms/${id}`);
    return res.body.status === status ? res.body : undefined;
  });
const send = async (auth: string, to: string, extra: object = {}) => {
  const res = await as(auth).post('/sms/send', {
    receptionist_id: rcp,
    to,
    message: 'Hi',
    ...extra,
  });
  expect(res.status).toBe(202);
  return res.body as { id: string; livemode: boolean };
};
const smsSent = async () =>
  (
    (await ctx.deps.knex('usage_periods').where({ tenant_id: tenantId }).first()) as
      { sms_sent: number } | undefined
  )?.sms_sent ?? 0;
const ids = (body: { data: Array<{ id: string }> }) => body.data.map((x) => x.id);

let testSms: { id: string; livemode: boolean };
let liveSms: { id: string; livemode: boolean };

beforeAll(async () => {
  ctx = await createTestContext({ SIMULATOR_SPEED: '1000' });
  ({ tenantId, rcp, auth: live } = await receptionistTenant(ctx, { phoneNumber: RCP_PHONE }));
  const made = await ctx.deps.stores.apiKeys.create({
    tenantId,
    scopes: ['admin'],
    livemode: false,
  });
  test = `Bearer ${made.key}`;
  worker = await startTestWorker(ctx, {
    runner: { smsProvider: carrier, campaignPollMs: 200, smsSimulator: { receiptDelayMs: 0 } },
  });
  testSms = await send(test, '+14155550123');
  liveSms = await send(live, '+14155550124');
});
afterAll(async () => {
  await worker?.close();
  await ctx?.close();
});

describe('SMS', () => {
  it("a test key's text goes to the simulated carrier, never to the configured one", async () => {
    expect([testSms.livemode, liveSms.livemode]).toEqual([false, true]);
    // Delivered: the simulator's receipt (the production carrier sends none).
    expect(await smsIn(test, 'delivered', testSms.id)).toMatchObject({ livemode: false });
    expect(await smsIn(live, 'sent', liveSms.id)).toMatchObject({ livemode: true });
    expect(carried).toEqual([liveSms.id]);
    const handoffs = await simulatorHandoffs(ctx.redis, ctx.config.queuePrefix);
    expect(handoffs[testSms.id]).toBe(1);
    expect(handoffs[liveSms.id]).toBeUndefined();
  });

  it('its events say livemode false; the live text is the only one metered', async () => {
    await smsIn(test, 'delivered', testSms.id);
    const events = (await ctx.deps.stores.events.listForTenant(tenantId)).filter(
      (e) => e.data.sms_id === testSms.id,
    );
    expect(events.map((e) => [e.type, e.livemode]).sort()).toEqual([
      ['sms.delivered', false],
      ['sms.sent', false],
    ]);
    await smsIn(live, 'sent', liveSms.id);
    expect(await smsSent()).toBe(1);
  });

  it('each mode reads, lists and cancels only its own messages', async () => {
    expect((await as(live).get(`/sms/${testSms.id}`)).status).toBe(404);
    expect((await as(test).get(`/sms/${liveSms.id}`)).status).toBe(404);
    expect(ids((await as(test).get(`/receptionists/${rcp}/sms`)).body)).toEqual([testSms.id]);
    expect(ids((await as(live).get(`/receptionists/${rcp}/sms`)).body)).toEqual([liveSms.id]);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await send(test, '+14155550125', { send_at: later });
    expect((await as(live).delete(`/sms/${scheduled.id}`)).status).toBe(404);
    expect((await as(test).get(`/sms/${scheduled.id}`)).body.status).toBe('scheduled');
    expect((await as(test).delete(`/sms/${scheduled.id}`)).status).toBe(204);
  });
});

let testLead: { id: string; livemode: boolean };
let liveLead: { id: string; livemode: boolean };
/** Live leads tagged spring, newest first: one of another number, one with the shared one. */
let liveSpring: string[];

describe('leads', () => {
  it('a test lead and a live lead may share a phone; each mode sees only its own', async () => {
    const body = { name: 'Dana', phone: SHARED_PHONE, tags: ['spring'] };
    const t = await as(test).post('/leads', body);
    const l = await as(live).post('/leads', body);
    expect([t.status, l.status]).toEqual([201, 201]);
    testLead = t.body;
    liveLead = l.body;
    expect([testLead.livemode, liveLead.livemode]).toEqual([false, true]);
    const other = await as(live).post('/leads', { phone: '+14155550142', tags: ['spring'] });
    expect(other.status).toBe(201);
    liveSpring = [other.body.id, liveLead.id];
    expect((await as(live).get(`/leads/${testLead.id}`)).status).toBe(404);
    expect((await as(test).get(`/leads/${liveLead.id}`)).status).toBe(404);
    expect((await as(live).patch(`/leads/${testLead.id}`, { notes: 'x' })).status).toBe(404);
    expect(ids((await as(test).get('/leads/search?tag=spring')).body)).toEqual([testLead.id]);
    expect(ids((await as(live).get('/leads/search?tag=spring')).body)).toEqual(liveSpring);
    const events = (await ctx.deps.stores.events.listForTenant(tenantId, 'lead.created')).filter(
      (e) => e.data.lead_id === testLead.id,
    );
    expect(events.map((e) => e.livemode)).toEqual([false]);
  });

  it("a test key's import makes test leads, matched against test leads only", async () => {
    const csv = `name,phone,tags\r\nDana Test,${SHARED_PHONE},spring\r\nLee,+14155550141,spring\r\n`;
    const res = await as(test).csv(csv);
    expect(res.status).toBe(202);
    expect(res.body.livemode).toBe(false);
    expect((await as(live).get(`/leads/imports/${res.body.id}`)).status).toBe(404);
    const done = await waitFor('the test import completed', async () => {
      const imp = (await as(test).get(`/leads/imports/${res.body.id}`)).body;
      return imp.status === 'completed' ? imp : undefined;
    });
    // The shared phone matched the test lead (updated), not the live one.
    expect(done).toMatchObject({ created: 1, updated: 1, skipped: 0 });
    expect((await as(test).get(`/leads/${testLead.id}`)).body.name).toBe('Dana Test');
    expect((await as(live).get(`/leads/${liveLead.id}`)).body.name).toBe('Dana');
    expect(ids((await as(live).get('/leads/search?tag=spring')).body)).toEqual(liveSpring);
  });
});

let testCampaign: { id: string; recipients: number; livemode: boolean };

describe('campaigns', () => {
  it('a test campaign reaches test leads only, on the simulator, unmetered', async () => {
    const body = {
      name: 'Spring',
      receptionist_id: rcp,
      message: 'Hi {{name}}',
      recipients: { lead_filter: { tag: 'spring' } },
    };
    const res = await as(test).post('/campaigns', body);
    expect(res.status).toBe(202);
    testCampaign = res.body;
    // The two test leads tagged spring, not the two live ones (one shares a test lead's phone).
    expect(testCampaign).toMatchObject({ recipients: 2, livemode: false });
    const refused = await as(test).post('/campaigns', {
      ...body,
      recipients: { lead_ids: [liveLead.id] },
    });
    expect([refused.status, refused.body.error?.param]).toEqual([404, 'recipients.lead_ids']);
    const done = await waitFor('the test campaign completed', async () => {
      const c = (await as(test).get(`/campaigns/${testCampaign.id}`)).body;
      return c.status === 'completed' ? c : undefined;
    });
    expect(done).toMatchObject({ sent: 2, livemode: false });
    const messages = (await ctx.deps
      .knex('sms_messages')
      .where({ campaign_id: testCampaign.id })
      .select('id', 'livemode')) as Array<{ id: string; livemode: boolean }>;
    expect(messages.map((m) => m.livemode)).toEqual([false, false]);
    for (const m of messages) expect(carried).not.toContain(m.id);
    const completed = await ctx.deps.stores.events.listForTenant(tenantId, 'campaign.completed');
    expect(completed.map((e) => e.livemode)).toEqual([false]);
    expect(await smsSent()).toBe(1);
  });

  it('each mode reads, lists and cancels only its own campaigns', async () => {
    const later = await as(live).post('/campaigns', {
      name: 'Live',
      receptionist_id: rcp,
      message: 'Hi',
      // At 1 a minute the second number waits: the campaign is still running when canceled.
      recipients: { phones: ['+14155550150', '+14155550151'] },
      send_rate_per_minute: 1,
    });
    expect([later.status, later.body.livemode]).toEqual([202, true]);
    expect((await as(live).get(`/campaigns/${testCampaign.id}`)).status).toBe(404);
    expect((await as(test).get(`/campaigns/${later.body.id}`)).status).toBe(404);
    expect((await as(test).post(`/campaigns/${later.body.id}/cancel`, {})).status).toBe(404);
    expect((await as(test).get(`/campaigns/${later.body.id}/recipients`)).status).toBe(404);
    expect(ids((await as(test).get('/campaigns')).body)).toEqual([testCampaign.id]);
    expect(ids((await as(live).get('/campaigns')).body)).toEqual([later.body.id]);
    expect((await as(live).post(`/campaigns/${later.body.id}/cancel`, {})).status).toBe(200);
  });
});

describe('DELETE /test-data', () => {
  it('wipes test SMS, leads and campaigns, never the live ones', async () => {
    await smsIn(test, 'delivered', testSms.id);
    const res = await as(live).delete('/test-data');
    expect(res.status).toBe(202);
    const deleted = await waitFor('test_data.deleted', async () => {
      const events = (await as(test).get('/events?type=test_data.deleted')).body.data;
      return events.find(
        (e: { data: { deletion_id: string } }) => e.data.deletion_id === res.body.id,
      );
    });
    // 1 text, 1 cancelled scheduled one, 2 campaign messages; 2 leads; 1 campaign.
    expect(deleted.data).toMatchObject({ sms_deleted: 4, leads_deleted: 2, campaigns_deleted: 1 });
    expect((await as(test).get(`/sms/${testSms.id}`)).status).toBe(404);
    expect((await as(test).get(`/leads/${testLead.id}`)).status).toBe(404);
    expect((await as(test).get(`/campaigns/${testCampaign.id}`)).status).toBe(404);
    expect((await as(test).get('/leads/search')).body.data).toEqual([]);
    expect((await as(live).get(`/sms/${liveSms.id}`)).body).toMatchObject({ livemode: true });
    expect((await as(live).get(`/leads/${liveLead.id}`)).body).toMatchObject({ livemode: true });
    expect((await as(live).get('/campaigns')).body.data).toHaveLength(1);
  });
});
