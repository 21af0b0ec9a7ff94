import request from 'supertest';
import { validateEventData } from '@switchboard/events';
import { verifyWebhook } from '@switchboard/sdk';
import { simulatorHandoffs } from '../../apps/worker/src/sms';
import { type TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { subscribedTenant, type SubscribedTenant } from '../support/subscribed-tenant';
import { messages } from '../support/fixtures';
import { waitFor } from '../support/worker';
import { addJob } from '../support/jobs';

// The SMS sender with the simulator and the real worker: sent → sms.sent at a subscription,
// carrier rejection, opt-out and back, the reconciler, stale claims, and never two hand-offs.
const RCP_PHONE = '+14155550100';
const STALE_SENDING_MS = 1500;

let ctx: TestContext;
let receiver: TestReceiver;
let auth: string;
let tenantId: string;
let rcp: string;
let secret: string;
let orphan: string;

const send = (to: string, message = 'Your booking BK-1042 is confirmed for Tuesday 09:30.') =>
  request(ctx.app)
    .post('/api/v1/sms/send')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to, message });
const accept = async (to: string, message?: string) => {
  const res = await send(to, message);
  expect(res.status).toBe(202);
  return res.body as { id: string; created_at: string; message: string };
};
/** A message accepted but never enqueued (the API died after its commit): no job exists. */
const acceptWithoutJob = async (to: string) => {
  const created = await ctx.deps.stores.sms.createOutbound({
    tenantId,
    receptionistId: rcp,
    to,
    message: 'Reminder: your appointment is tomorrow.',
    segments: 1,
    metadata: {},
    idempotency: null,
    at: new Date(),
  });
  if (!created) throw new Error('message not accepted');
  return created.sms;
};
const detail = async (id: string) =>
  (await request(ctx.app).get(`/api/v1/sms/${id}`).set('Authorization', auth)).body;
const settled = (id: string) =>
  waitFor(`SMS ${id} to reach a final status`, async () => {
    const d = await detail(id);
    return ['delivered', 'undelivered', 'failed', 'cancelled'].includes(d.status) ? d : undefined;
  });
const eventsOf = async (id: string) =>
  (await ctx.deps.stores.events.listForTenant(tenantId)).filter((e) => e.data.sms_id === id);
const handoffs = async (id: string) =>
  (await simulatorHandoffs(ctx.redis, ctx.config.queuePrefix))[id] ?? 0;
const ingest = (body: object) =>
  request(ctx.app)
    .post('/internal/v1/telephony/events')
    .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
    .send(body);

let world: SubscribedTenant;
beforeAll(async () => {
  world = await subscribedTenant({
    env: { SIMULATOR_SPEED: '100' },
    phoneNumber: RCP_PHONE,
    events: ['sms.sent'],
  });
  ({ ctx, receiver, auth, tenantId, rcp, secret } = world);
  // Accepted while no worker ran, and its job lost: only the reconciler can send it.
  orphan = (await accept('+14155550140')).id;
  await ctx.queues.sms.remove(orphan);
  await world.startWorker({ smsStaleSendingMs: STALE_SENDING_MS });
});
afterAll(() => world?.close());

describe('sending', () => {
  it('sends through the provider once and delivers a signed sms.sent', async () => {
    const accepted = await accept('+14155550141', 'Hi Dana 👋 see you Tuesday');
    const sms = await settled(accepted.id);
    expect(sms).toMatchObject({
      id: accepted.id,
      direction: 'outbound',
      status: 'delivered',
      from: RCP_PHONE,
      to: '+14155550141',
      error_code: null,
      created_at: accepted.created_at,
    });
    expect(Date.parse(sms.sent_at)).toBeGreaterThanOrEqual(Date.parse(sms.created_at));
    expect(await handoffs(accepted.id)).toBe(1);

    const events = await eventsOf(accepted.id);
    expect(events.map((e) => e.type)).toEqual(['sms.sent', 'sms.delivered']);
    expect(validateEventData('sms.sent', events[0]?.data)).toBeNull();
    expect(events[0]?.data).toEqual({
      sms_id: accepted.id,
      from: RCP_PHONE,
      to: '+14155550141',
      message: 'Hi Dana 👋 see you Tuesday',
      sent_at: sms.sent_at,
      campaign_id: null,
    });
    const delivered = await waitFor('sms.sent delivered', () =>
      receiver.requests.find((r) => JSON.parse(r.body).data?.sms_id === accepted.id),
    );
    expect(() => verifyWebhook(delivered.body, delivered.headers, secret)).not.toThrow();
    expect(JSON.parse(delivered.body)).toMatchObject({
      event: 'sms.sent',
      receptionist_id: rcp,
      data: events[0]?.data,
    });
  });

  it('a carrier rejection fails the message with carrier_rejected and emits sms.failed', async () => {
    const { id } = await accept('+14155550003');
    const sms = await settled(id);
    expect(sms).toMatchObject({ status: 'failed', error_code: 'carrier_rejected', sent_at: null });
    expect(await handoffs(id)).toBe(1);
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['sms.failed']);
    expect(validateEventData('sms.failed', events[0]?.data)).toBeNull();
    expect(events[0]?.data).toMatchObject({
      status: 'failed',
      error_code: 'carrier_rejected',
      error_message: 'The carrier refused the message',
      campaign_id: null,
    });
  });

  it('opt-out, send refused, START, send accepted and sent', async () => {
    const phone = '+14155550142';
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'STOP', { from: phone }));
    const refused = await send(phone);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('recipient_opted_out');
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'start', { from: phone }));
    const { id } = await accept(phone);
    expect((await settled(id)).status).toBe('delivered');
    // This one, and the STOP and START confirmations.
    const rows = await ctx.deps
      .knex('sms_messages')
      .where({ to_number: phone })
      .orderBy('created_at');
    expect(rows.map((r) => r.reply_kind)).toEqual(['opt_out', 'opt_in', null]);
  });

  it('a recipient who opts out after the message was accepted is not sent to', async () => {
    const phone = '+14155550143';
    // Accepted, its job lost, then STOP arrives before the reconciler picks it up.
    const { id } = await acceptWithoutJob(phone);
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'STOP', { from: phone }));
    const sms = await settled(id);
    expect(sms).toMatchObject({ status: 'failed', error_code: 'recipient_opted_out' });
    expect(await handoffs(id)).toBe(0);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['sms.failed']);
  });
});

describe('the sender', () => {
  it('the reconciler sends a queued message whose job was lost', async () => {
    expect((await settled(orphan)).status).toBe('delivered');
    expect(await handoffs(orphan)).toBe(1);
  });

  it('hands a message to the provider once, whatever jobs exist for it', async () => {
    const { id } = await accept('+14155550144');
    await Promise.all(
      ['dup-a', 'dup-b', 'dup-c'].map((jobId) =>
        addJob(ctx.queues, 'sms', { v: 1, smsId: id }, { jobId: `${jobId}-${id}` }),
      ),
    );
    await settled(id);
    await waitFor('every job to be processed', async () => {
      const counts = await ctx.queues.sms.getJobCounts('waiting', 'active', 'delayed');
      return Object.values(counts).every((n) => n === 0);
    });
    expect(await handoffs(id)).toBe(1);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['sms.sent', 'sms.delivered']);
  });

  it('the claim is won by exactly one of concurrent claimers', async () => {
    // The running worker's reconciler leaves it alone for its grace period.
    const { id } = await acceptWithoutJob('+14155550145');
    const claims = await Promise.all(
      Array.from({ length: 10 }, () =>
        ctx.deps.knex.transaction((trx) => ctx.deps.stores.smsLifecycle.claim(trx, id)),
      ),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
  });

  it('fails a message whose sender died after claiming it, and never sends it', async () => {
    const { id } = await acceptWithoutJob('+14155550146');
    // Claimed by a worker that then vanished before handing it over.
    await ctx.deps.knex.transaction((trx) => ctx.deps.stores.smsLifecycle.claim(trx, id));
    const sms = await settled(id);
    expect(sms).toMatchObject({ status: 'failed', error_code: 'send_interrupted' });
    // A job for it now (stalled-job recovery, a reconciler) finds the claim spent.
    await addJob(ctx.queues, 'sms', { v: 1, smsId: id }, { jobId: `late-${id}` });
    await waitFor(
      'the late job to be processed',
      async () => !(await ctx.queues.sms.getJob(`late-${id}`)),
    );
    expect(await handoffs(id)).toBe(0);
    expect((await detail(id)).status).toBe('failed');
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['sms.failed']);
  });
});
