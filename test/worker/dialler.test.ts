import request from 'supertest';
import { validateEventData } from '@switchboard/events';
import { verifyWebhook } from '@switchboard/sdk';
import { type TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { subscribedTenant, type SubscribedTenant } from '../support/subscribed-tenant';
import { waitFor } from '../support/worker';
import { addJob } from '../support/jobs';

// The outbound dialler with the simulator: every magic number, a normal call's complete
// lifecycle (detail, outbox events, delivered webhooks), the reconciler, and no double dial.
const RCP_PHONE = '+14155550100';
const FINAL = ['completed', 'busy', 'no_answer', 'failed'];

let ctx: TestContext;
let receiver: TestReceiver;
let auth: string;
let tenantId: string;
let rcp: string;
let secret: string;
let orphan: string;

const start = async (to: string, extra: object = {}) => {
  const res = await request(ctx.app)
    .post('/api/v1/calls/outbound')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to, ...extra });
  expect(res.status).toBe(202);
  return res.body as { id: string; created_at: string };
};
const detail = async (id: string) =>
  (await request(ctx.app).get(`/api/v1/calls/${id}`).set('Authorization', auth)).body;
const finished = (id: string) =>
  waitFor(`call ${id} to end`, async () => {
    const d = await detail(id);
    return FINAL.includes(d.status) ? d : undefined;
  });
const eventsOf = async (id: string) =>
  (await ctx.deps.stores.events.listForTenant(tenantId)).filter((e) => e.data.call_id === id);

let world: SubscribedTenant;
beforeAll(async () => {
  world = await subscribedTenant({
    env: { SIMULATOR_SPEED: '1000' },
    phoneNumber: RCP_PHONE,
  });
  ({ ctx, receiver, auth, tenantId, rcp, secret } = world);
  // Accepted while no worker ran, and its job lost: only the reconciler can dial it.
  orphan = (await start('+14155550124')).id;
  await ctx.queues.outboundCalls.remove(orphan);
  await world.startWorker();
});
afterAll(() => world?.close());

describe('the simulator', () => {
  it('a normal number answers, talks and books: the complete call in the detail', async () => {
    const accepted = await start('+14155550123', {
      customer_name: 'Dana Whitfield',
      metadata: { crm_id: 'c-42' },
    });
    const call = await finished(accepted.id);
    expect(call).toMatchObject({
      id: accepted.id,
      direction: 'outbound',
      status: 'completed',
      outcome: 'booked',
      from: RCP_PHONE,
      to: '+14155550123',
      customer_name: 'Dana Whitfield',
      customer_phone: '+14155550123',
      started_at: accepted.created_at,
      has_transcript: true,
      has_recording: true,
      receptionist_id: rcp,
      receptionist_name: 'Front Desk',
      metadata: { crm_id: 'c-42' },
    });
    expect(['caller_hangup', 'agent_hangup']).toContain(call.end_reason);
    expect(Date.parse(call.answered_at)).toBeGreaterThanOrEqual(Date.parse(call.started_at));
    expect(Date.parse(call.ended_at)).toBeGreaterThanOrEqual(Date.parse(call.answered_at));
    expect(Number.isInteger(call.duration_seconds)).toBe(true);
    expect(call.transcript.summary).toContain('Dana Whitfield');
    expect(call.transcript.turns.length).toBeGreaterThanOrEqual(4);
    expect(call.transcript.turns[0]).toMatchObject({ role: 'assistant' });
    expect(call.transcript.turns.map((t: { role: string }) => t.role)).toContain('customer');
    expect(call.recording).toMatchObject({ format: 'mp3' });
    expect(call.recording.url).toMatch(/^https:\/\//);
    expect(call.booking).toEqual({
      confirmation: expect.stringMatching(/^BK-\d{4}$/),
      date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      time: expect.stringMatching(/^\d{2}:\d{2}$/),
      service_type: expect.any(String),
      address: expect.any(String),
    });
    expect(call.cost).toMatchObject({ currency: 'USD', total: expect.any(Number) });

    const events = await eventsOf(accepted.id);
    expect(events.map((e) => e.type)).toEqual(['call.started', 'call.completed']);
    for (const e of events) expect(validateEventData(e.type, e.data)).toBeNull();
    expect(events[0]?.data).toEqual({
      call_id: accepted.id,
      direction: 'outbound',
      from: RCP_PHONE,
      to: '+14155550123',
      started_at: accepted.created_at,
    });
    expect(events[1]?.data).toMatchObject({
      call_id: accepted.id,
      direction: 'outbound',
      outcome: 'booked',
      duration_seconds: call.duration_seconds,
      customer_name: 'Dana Whitfield',
      customer_phone: '+14155550123',
      transcript_summary: call.transcript.summary,
      booking: call.booking,
      started_at: accepted.created_at,
      ended_at: call.ended_at,
    });
  });

  it.each([
    ['+14155550001', 'busy', 'busy'],
    ['+14155550002', 'no_answer', 'no_answer'],
    ['+14155550003', 'failed', 'error'],
  ])('%s ends %s: no conversation, only call.completed', async (to, status, endReason) => {
    const { id } = await start(to);
    const call = await finished(id);
    expect(call).toMatchObject({
      status,
      end_reason: endReason,
      outcome: 'no_outcome',
      duration_seconds: 0,
      answered_at: null,
      transcript: null,
      recording: null,
      booking: null,
      has_transcript: false,
    });
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['call.completed']);
    expect(validateEventData('call.completed', events[0]?.data)).toBeNull();
    expect(events[0]?.data).toMatchObject({ outcome: 'no_outcome', duration_seconds: 0 });
  });

  it('the lifecycle reaches subscribers as signed webhooks', async () => {
    const { id } = await start('+14155550125');
    await finished(id);
    const delivered = await waitFor('both events delivered', () => {
      const mine = receiver.requests.filter((r) => JSON.parse(r.body).data?.call_id === id);
      return mine.length >= 2 ? mine : undefined;
    });
    const envelopes = delivered.map((r) => JSON.parse(r.body) as { event: string });
    expect(envelopes.map((e) => e.event).sort()).toEqual(['call.completed', 'call.started']);
    for (const r of delivered) {
      expect(() => verifyWebhook(r.body, r.headers, secret)).not.toThrow();
    }
  });
});

describe('the dialler', () => {
  it('the reconciler dials a queued call whose job was lost', async () => {
    const call = await finished(orphan);
    expect(call.status).toBe('completed');
  });

  it('never dials a call twice, whatever jobs exist for it', async () => {
    const { id } = await start('+14155550126');
    // Duplicates with other job ids race the original job for the same call.
    await Promise.all(
      ['dup-a', 'dup-b', 'dup-c'].map((jobId) =>
        addJob(ctx.queues, 'outboundCalls', { v: 1, callId: id }, { jobId: `${jobId}-${id}` }),
      ),
    );
    await finished(id);
    await waitFor('every job to be processed', async () => {
      const counts = await ctx.queues.outboundCalls.getJobCounts('waiting', 'active', 'delayed');
      return Object.values(counts).every((n) => n === 0);
    });
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['call.started', 'call.completed']);
  });

  it('the claim is won by exactly one of concurrent claimers', async () => {
    const created = await ctx.deps.stores.calls.createOutbound({
      tenantId,
      receptionistId: rcp,
      to: '+14155550127',
      customerName: null,
      purpose: null,
      metadata: {},
      idempotency: null,
      at: new Date(),
    });
    const call = created?.call as { id: string };
    const claims = await Promise.all(
      Array.from({ length: 10 }, () =>
        ctx.deps.stores.callLifecycle.claim(ctx.deps.knex, call.id, 'sim_x'),
      ),
    );
    // The running worker's reconciler may not claim it yet (grace period), so one of ours won.
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect((await detail(call.id)).status).toBe('ringing');
  });

  it('fails a claimed call that stopped progressing (its worker died mid-call)', async () => {
    const created = await ctx.deps.stores.calls.createOutbound({
      tenantId,
      receptionistId: rcp,
      to: '+14155550128',
      customerName: null,
      purpose: null,
      metadata: {},
      idempotency: null,
      at: new Date(),
    });
    const id = (created?.call as { id: string }).id;
    // Claimed by a worker that then vanished, ten minutes ago.
    await ctx.deps.stores.callLifecycle.claim(ctx.deps.knex, id, `sim_${id}`);
    await ctx.deps
      .knex('calls')
      .where({ id })
      .update({ updated_at: new Date(Date.now() - 600_000) });
    const call = await finished(id);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'error', outcome: 'no_outcome' });
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['call.completed']);
    expect(validateEventData('call.completed', events[0]?.data)).toBeNull();
  });
});
