import request from 'supertest';
import { validateEventData } from '@switchboard/events';
import { applyHeldReceipt } from '@switchboard/sms';
import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { messages } from '../support/fixtures';
import { subscribedTenant, type SubscribedTenant } from '../support/subscribed-tenant';
import { waitFor } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';

// Delivery receipts (sms.status through telephony ingestion) with the simulator and the real
// worker: delivered and undelivered with their events at a subscription, receipts repeated,
// unknown, of another tenant, early (before `sent`) and late (after a final status); and the
// keyword replies (STOP, START, HELP): one per inbound message, never to an opted-out number
// except the STOP confirmation.
const RCP_PHONE = '+14155550300';

let ctx: TestContext;
let receiver: TestReceiver;
let auth: string;
let tenantId: string;
let rcp: string;

const accept = async (to: string) => {
  const res = await request(ctx.app)
    .post('/api/v1/sms/send')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to, message: 'Your table for two is booked for 19:30.' });
  expect(res.status).toBe(202);
  return res.body as { id: string };
};
const detail = async (id: string) =>
  (await request(ctx.app).get(`/api/v1/sms/${id}`).set('Authorization', auth)).body;
const final = (id: string) =>
  waitFor(`SMS ${id} to reach a final status`, async () => {
    const d = await detail(id);
    return ['delivered', 'undelivered', 'failed'].includes(d.status) ? d : undefined;
  });
const eventsOf = async (id: string) =>
  (await ctx.deps.stores.events.listForTenant(tenantId)).filter((e) => e.data.sms_id === id);
const ingest = (body: object) =>
  request(ctx.app)
    .post('/internal/v1/telephony/events')
    .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
    .send(body);
let seq = 0;
const receipt = (providerMessageId: string, status: string, extra: object = {}) => ({
  id: `rcpt_test_${++seq}`,
  type: 'sms.status',
  receptionist_id: rcp,
  provider_message_id: providerMessageId,
  status,
  occurred_at: new Date().toISOString(),
  ...extra,
});
const outboundTo = (phone: string) =>
  ctx.deps.knex('sms_messages').where({ to_number: phone, direction: 'outbound' });

let world: SubscribedTenant;
beforeAll(async () => {
  world = await subscribedTenant({
    env: { SIMULATOR_SPEED: '100' },
    phoneNumber: RCP_PHONE,
    events: ['sms.sent', 'sms.delivered', 'sms.failed'],
  });
  ({ ctx, receiver, auth, tenantId, rcp } = world);
  await world.startWorker();
});
afterAll(() => world?.close());

describe('delivery receipts', () => {
  it('a deliverable number: sent, then delivered, sms.sent then sms.delivered at the webhook', async () => {
    const { id } = await accept('+14155550311');
    const sms = await final(id);
    expect(sms).toMatchObject({ status: 'delivered', error_code: null, error_message: null });
    expect(Date.parse(sms.delivered_at)).toBeGreaterThanOrEqual(Date.parse(sms.sent_at));
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['sms.sent', 'sms.delivered']);
    expect(validateEventData('sms.delivered', events[1]?.data)).toBeNull();
    expect(events[1]?.data).toEqual({
      sms_id: id,
      from: RCP_PHONE,
      to: '+14155550311',
      delivered_at: sms.delivered_at,
      campaign_id: null,
    });
    const seen = await waitFor('sms.sent and sms.delivered at the receiver', () => {
      const types = receiver.requests
        .map((r) => JSON.parse(r.body) as { event: string; data: { sms_id?: string } })
        .filter((b) => b.data.sms_id === id)
        .map((b) => b.event);
      return types.length === 2 ? types : undefined;
    });
    expect(seen.sort()).toEqual(['sms.delivered', 'sms.sent']);
  });

  it('the undeliverable number ends undelivered with sms.failed (unreachable_handset)', async () => {
    const { id } = await accept('+14155550004');
    const sms = await final(id);
    expect(sms).toMatchObject({
      status: 'undelivered',
      error_code: 'unreachable_handset',
      error_message: 'The carrier could not reach the handset',
      delivered_at: null,
    });
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['sms.sent', 'sms.failed']);
    expect(validateEventData('sms.failed', events[1]?.data)).toBeNull();
    expect(events[1]?.data).toMatchObject({
      status: 'undelivered',
      error_code: 'unreachable_handset',
      campaign_id: null,
    });
  });

  it('a repeated or late receipt changes nothing and emits nothing more', async () => {
    const { id } = await accept('+14155550312');
    await final(id);
    const providerId = (await ctx.deps.knex('sms_messages').where({ id }).first())
      .provider_message_id as string;
    // The same receipt under a new message id, and an `undelivered` after `delivered`.
    expect((await ingest(receipt(providerId, 'delivered'))).status).toBe(202);
    const late = receipt(providerId, 'undelivered', { error_code: 'unreachable_handset' });
    expect((await ingest(late)).status).toBe(202);
    expect((await ingest(late)).body).toEqual({ accepted: false, duplicate: true });
    expect((await detail(id)).status).toBe('delivered');
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['sms.sent', 'sms.delivered']);
  });

  it('a receipt for an unknown message or receptionist, or another tenant’s, is accepted and ignored', async () => {
    const { rcp: otherRcp } = await receptionistTenant(ctx, {
      name: 'Other',
      phoneNumber: '+14155550399',
    });
    const { id } = await accept('+14155550313');
    await final(id);
    const providerId = (await ctx.deps.knex('sms_messages').where({ id }).first())
      .provider_message_id as string;
    const before = await ctx.deps.knex('events').count({ n: '*' }).first();
    for (const body of [
      receipt('SM-no-such-message', 'delivered'),
      { ...receipt(providerId, 'undelivered'), receptionist_id: otherRcp },
      { ...receipt(providerId, 'undelivered'), receptionist_id: 'rcp_doesnotexist' },
    ]) {
      const res = await ingest(body);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ accepted: true });
    }
    expect(await ctx.deps.knex('events').count({ n: '*' }).first()).toEqual(before);
    expect((await detail(id)).status).toBe('delivered');
  });

  it('a receipt that comes before the message is marked sent still ends it delivered', async () => {
    const created = await ctx.deps.stores.sms.createOutbound({
      tenantId,
      receptionistId: rcp,
      to: '+14155550314',
      message: 'Early receipt',
      segments: 1,
      metadata: {},
      idempotency: null,
      at: new Date(),
    });
    const id = created?.sms.id as string;
    const lifecycle = ctx.deps.stores.smsLifecycle;
    await ctx.deps.knex.transaction((trx) => lifecycle.claim(trx, id));
    expect((await ingest(receipt('SM-early', 'delivered'))).status).toBe(202);
    await ctx.deps.knex.transaction(async (trx) => {
      const sent = await lifecycle.markSent(trx, id, {
        sentAt: new Date(),
        providerMessageId: 'SM-early',
      });
      if (sent) await applyHeldReceipt(trx, lifecycle, sent);
    });
    expect(await detail(id)).toMatchObject({ status: 'delivered' });
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['sms.delivered']);
  });

  it('a receipt names a message and a status; anything else is a 400', async () => {
    const res = await ingest({ ...receipt('SM-x', 'read') });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_parameter');
  });
});

describe('keyword replies', () => {
  it('STOP gets one confirmation (also when delivered twice), and the number is opted out', async () => {
    const phone = '+14155550321';
    const stop = messages.smsInbound(rcp, RCP_PHONE, 'Stop', { from: phone });
    expect((await ingest(stop)).status).toBe(202);
    expect((await ingest(stop)).status).toBe(200);
    expect((await ingest({ ...stop, id: `${stop.id}-again` })).status).toBe(200);
    const [reply] = await waitFor('the confirmation to be delivered', async () => {
      const rows = await outboundTo(phone);
      return rows.length === 1 && rows[0].status === 'delivered' ? rows : undefined;
    });
    expect(reply).toMatchObject({ reply_kind: 'opt_out', from_number: RCP_PHONE });
    expect(reply.message).toMatch(/unsubscribed/);
    // A HELP from the opted-out number gets nothing: only the STOP confirmation goes there.
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'HELP', { from: phone }));
    expect(await outboundTo(phone)).toHaveLength(1);
  });

  it('HELP and INFO get the help reply; START the re-subscribe reply; a sentence gets none', async () => {
    const phone = '+14155550322';
    await ingest(messages.smsInbound(rcp, RCP_PHONE, ' info ', { from: phone }));
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'help me with my booking', { from: phone }));
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'START', { from: phone }));
    const rows = await waitFor('two replies delivered', async () => {
      const r = await outboundTo(phone).orderBy('created_at');
      return r.length === 2 && r.every((m) => m.status === 'delivered') ? r : undefined;
    });
    expect(rows.map((r) => r.reply_kind)).toEqual(['help', 'opt_in']);
    expect(rows[0].message).toMatch(/STOP/);
  });

  it("a tenant's own reply text replaces the default", async () => {
    await ctx.deps.stores.tenants.setSmsReplies(tenantId, { help: 'Call us on 0800 123.' });
    const phone = '+14155550323';
    await ingest(messages.smsInbound(rcp, RCP_PHONE, 'HELP', { from: phone }));
    const [row] = await waitFor('the help reply', async () => {
      const r = await outboundTo(phone);
      return r.length === 1 ? r : undefined;
    });
    expect(row.message).toBe('Call us on 0800 123.');
    await ctx.deps.stores.tenants.setSmsReplies(tenantId, { help: null });
  });
});
