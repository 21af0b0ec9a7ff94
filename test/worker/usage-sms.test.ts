import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { messages } from '../support/fixtures';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';

// GET /usage counts SMS (docs/API.md, Usage): a message the worker sent counts in sms_sent
// (in the transaction that marks it sent), an inbound one in sms_received (in ingestion's
// transaction); a carrier rejection counts nothing and a replayed inbound message id counts
// once. Real API, worker, simulator, Postgres and Redis.
const RCP_PHONE = '+14155550100';

let ctx: TestContext;
let worker: TestWorker;
let auth: string;
let rcp: string;

const send = async (to: string) => {
  const res = await request(ctx.app)
    .post('/api/v1/sms/send')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to, message: 'Your booking is confirmed for Tuesday 09:30.' });
  expect(res.status).toBe(202);
  return res.body.id as string;
};
const settled = (id: string) =>
  waitFor(`SMS ${id} to reach a final status`, async () => {
    const res = await request(ctx.app).get(`/api/v1/sms/${id}`).set('Authorization', auth);
    return ['delivered', 'undelivered', 'failed'].includes(res.body.status) ? res.body : undefined;
  });
const ingest = (body: object) =>
  request(ctx.app)
    .post('/internal/v1/telephony/events')
    .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
    .send(body);
const usage = async (query = '') => {
  const res = await request(ctx.app).get(`/api/v1/usage${query}`).set('Authorization', auth);
  expect(res.status).toBe(200);
  return res.body;
};

beforeAll(async () => {
  ctx = await createTestContext({ SIMULATOR_SPEED: '100' });
  ({ auth, rcp } = await receptionistTenant(ctx, { scopes: ['write'], phoneNumber: RCP_PHONE }));
  worker = await startTestWorker(ctx);
});
afterAll(async () => {
  await worker?.close();
  await ctx?.close();
});

it('counts a sent SMS and a received one, not a carrier rejection nor a replay', async () => {
  expect(await usage()).toMatchObject({ sms_sent: 0, sms_received: 0 });

  const sent = await settled(await send('+14155550141'));
  expect(sent).toMatchObject({ status: 'delivered' });
  const rejected = await settled(await send('+14155550003'));
  expect(rejected).toMatchObject({ status: 'failed', error_code: 'carrier_rejected' });

  // The inbound message in the month of the sent one, so both count in one period.
  const inbound = messages.smsInbound(rcp, RCP_PHONE, 'Thanks, see you then', {
    from: '+14155550141',
    at: sent.sent_at,
  });
  expect((await ingest(inbound)).status).toBe(202);
  const replay = await ingest(inbound);
  expect([replay.status, replay.body]).toEqual([200, { accepted: false, duplicate: true }]);

  const period = `?period=${(sent.sent_at as string).slice(0, 7)}`;
  expect(await usage(period)).toMatchObject({
    sms_sent: 1,
    sms_received: 1,
    minutes_used: 0,
    calls_completed: 0,
    // The breakdown lists receptionists with completed calls; SMS alone do not add one.
    by_receptionist: [],
  });

  // Another tenant's usage holds none of it.
  const other = await ctx.tenant(['read']);
  const theirs = await request(ctx.app)
    .get(`/api/v1/usage${period}`)
    .set('Authorization', other.auth);
  expect(theirs.body).toMatchObject({ sms_sent: 0, sms_received: 0 });
});
