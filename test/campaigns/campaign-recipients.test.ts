import request from 'supertest';
import { insertCampaignLeads } from '../support/campaigns';
import type { TestContext } from '../support/context';
import { subscribedTenant, type SubscribedTenant } from '../support/subscribed-tenant';
import { waitFor } from '../support/worker';

// A small campaign sent by the real worker through the simulated carrier, receipts included:
// the campaign's delivered/undelivered counts and GET /campaigns/{id}/recipients (outcomes,
// the outcome filter, keyset pages, tenant isolation, bad input).
const RCP_PHONE = '+14155550500';
const DELIVERABLE = ['+14155550511', '+14155550512', '+14155550513'];
const UNDELIVERABLE = '+14155550004'; // the simulator's unreachable handset
const REJECTED = '+14155550003'; // the simulator's carrier refusal
const PHONES = [...DELIVERABLE, UNDELIVERABLE, REJECTED];

let ctx: TestContext;
let auth: string;
let tenantId: string;
let rcp: string;
let campaignId: string;
let leadId: string;

interface Recipient {
  phone: string;
  lead_id: string | null;
  outcome: string;
  sms_id: string | null;
  error_code: string | null;
  sent_at: string | null;
  updated_at: string;
}

const get = (path: string, as = auth) =>
  request(ctx.app).get(`/api/v1${path}`).set('Authorization', as);
const recipients = (query = '') => get(`/campaigns/${campaignId}/recipients${query}`);
/** Every page of the recipients list, `limit` at a time. */
async function walk(query: string, limit: number): Promise<Recipient[]> {
  const all: Recipient[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 20; pages++) {
    const c: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await recipients(`?limit=${limit}${query}${c}`);
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    all.push(...(res.body.data as Recipient[]));
    if (!res.body.has_more) return all;
    cursor = res.body.cursor as string;
  }
  throw new Error('more pages than recipients');
}

let world: SubscribedTenant;
beforeAll(async () => {
  world = await subscribedTenant({
    env: { SIMULATOR_SPEED: '100' },
    phoneNumber: RCP_PHONE,
    events: ['campaign.completed'],
  });
  ({ ctx, auth, tenantId, rcp } = world);
  await world.startWorker({ campaignPollMs: 200 });
  [leadId] = (await insertCampaignLeads(ctx, tenantId, [DELIVERABLE[0] as string], 'r')) as [
    string,
  ];
  const res = await request(ctx.app)
    .post('/api/v1/campaigns')
    .set('Authorization', auth)
    .send({
      name: 'Receipts',
      receptionist_id: rcp,
      message: 'Hi {{name}}, your boiler check is due. Reply STOP to opt out.',
      recipients: { phones: PHONES },
      send_rate_per_minute: 600,
    });
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ delivered: 0, undelivered: 0 });
  campaignId = res.body.id as string;
});
afterAll(() => world?.close());

it('counts the receipts: delivered and undelivered on the campaign, read and list alike', async () => {
  const done = await waitFor('the campaign completed with every receipt', async () => {
    const c = (await get(`/campaigns/${campaignId}`)).body;
    return c.status === 'completed' && c.delivered + c.undelivered === 4 ? c : undefined;
  });
  expect(done).toMatchObject({
    recipients: 5,
    sent: 4,
    failed: 1,
    opted_out: 0,
    skipped: 0,
    delivered: 3,
    undelivered: 1,
  });
  const list = await get('/campaigns');
  expect(list.body.data).toEqual([done]);
});

it('lists each recipient with its outcome, last in sending order first, a page at a time', async () => {
  const all = await walk('', 2);
  // Newest first: the reverse of the order the phones were given in.
  expect(all.map((r) => r.phone)).toEqual([...PHONES].reverse());
  const byPhone = new Map(all.map((r) => [r.phone, r]));
  for (const phone of DELIVERABLE) {
    expect(byPhone.get(phone)).toMatchObject({
      outcome: 'delivered',
      sms_id: expect.stringMatching(/^sms_/),
      error_code: null,
      sent_at: expect.any(String),
    });
  }
  expect(byPhone.get(DELIVERABLE[0] as string)?.lead_id).toBe(leadId);
  expect(byPhone.get(DELIVERABLE[1] as string)?.lead_id).toBeNull();
  expect(byPhone.get(UNDELIVERABLE)).toMatchObject({
    outcome: 'undelivered',
    error_code: 'unreachable_handset',
    sent_at: expect.any(String),
  });
  expect(byPhone.get(REJECTED)).toMatchObject({
    outcome: 'failed',
    error_code: 'carrier_rejected',
    sent_at: null,
  });
  // The message behind a recipient is the campaign's own SMS to that number.
  const sms = await get(`/sms/${byPhone.get(UNDELIVERABLE)?.sms_id}`);
  expect(sms.body).toMatchObject({ to: UNDELIVERABLE, campaign_id: campaignId });
  // One page holds them all when the limit allows.
  const one = await recipients('?limit=5');
  expect(one.body).toMatchObject({ has_more: false, cursor: null });
  expect(one.body.data).toEqual(all);
});

it('filters by outcome, pages included', async () => {
  const delivered = await walk('&outcome=delivered', 1);
  expect(delivered.map((r) => r.phone)).toEqual([...DELIVERABLE].reverse());
  expect((await walk('&outcome=undelivered', 1)).map((r) => r.phone)).toEqual([UNDELIVERABLE]);
  expect((await walk('&outcome=failed', 2)).map((r) => r.phone)).toEqual([REJECTED]);
  // Every receipt is in: none is merely sent any more.
  expect(await walk('&outcome=sent', 2)).toEqual([]);
});

it('is tenant isolated and refuses bad input with clear errors', async () => {
  const other = await ctx.tenant(['read']);
  const foreign = await get(`/campaigns/${campaignId}/recipients`, other.auth);
  expect(foreign.status).toBe(404);
  expect(foreign.body.error).toMatchObject({ code: 'resource_not_found' });
  // A cursor of this list is refused by another tenant, whose campaign id it is not anyway.
  const page = await recipients('?limit=1');
  const reused = await get(
    `/campaigns/${campaignId}/recipients?cursor=${encodeURIComponent(page.body.cursor)}`,
    other.auth,
  );
  expect(reused.status).toBe(400);
  const missing = await get('/campaigns/cmp_0000000000000000/recipients');
  expect(missing.status).toBe(404);
  const badOutcome = await recipients('?outcome=lost');
  expect(badOutcome.status).toBe(400);
  expect(badOutcome.body.error).toMatchObject({ code: 'invalid_parameter', param: 'outcome' });
  const badCursor = await recipients('?cursor=nope');
  expect(badCursor.status).toBe(400);
  expect(badCursor.body.error).toMatchObject({ code: 'invalid_cursor' });
  const badLimit = await recipients('?limit=0');
  expect(badLimit.status).toBe(400);
});
