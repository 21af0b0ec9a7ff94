import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Switchboard } from '@switchboard/sdk';
import type { DialRequest, TelephonyProvider } from '../../apps/worker/src/dialler';
import { notConnectedMessage } from '../../apps/worker/src/dialler/messages';
import { createTestContext, type TestContext } from '../support/context';
import { receptionistTenant } from '../support/receptionist';
import { openSse } from '../support/sse';
import { startHttpsReceiver, type HttpsReceiver } from '../support/webhook-world';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';

// Test mode (docs/API.md, Test mode): a test-mode key's outbound call goes to the simulator
// even when a real provider is configured, carries livemode false on the call, its events and
// their envelopes, reaches only test-mode subscriptions, is invisible to live keys (and live
// data to it), and is never metered.
const RCP_PHONE = '+14155550100';
const FINAL = ['completed', 'busy', 'no_answer', 'failed'];

/** The "production carrier": records what it is asked to dial; every call it places is busy. */
const dialled: string[] = [];
const carrier: TelephonyProvider = {
  name: 'carrier',
  providerCallId: (callId) => `carrier_${callId}`,
  async dial(req: DialRequest, report) {
    dialled.push(req.callId);
    await report(notConnectedMessage(req, 'busy', new Date()));
  },
  close: async () => undefined,
};

let ctx: TestContext;
let world: HttpsReceiver;
let worker: TestWorker;
let server: Server;
let baseUrl: string;
let tenantId: string;
let rcp: string;
let live: string;
let test: string;
let liveSub: string;
let testSub: string;
let testCall: { id: string; livemode: boolean };
let liveCall: { id: string; livemode: boolean };

const as = (auth: string) => ({
  get: (path: string) => request(ctx.app).get(`/api/v1${path}`).set('Authorization', auth),
  post: (path: string, body: object, headers: Record<string, string> = {}) =>
    request(ctx.app).post(`/api/v1${path}`).set('Authorization', auth).set(headers).send(body),
});
const finished = (auth: string, id: string) =>
  waitFor(`call ${id} to end`, async () => {
    const res = await as(auth).get(`/calls/${id}`);
    return FINAL.includes(res.body.status) ? res.body : undefined;
  });
const eventIdsOf = async (callId: string) =>
  (await ctx.deps.stores.events.listForTenant(tenantId)).filter((e) => e.data.call_id === callId);
const subscribe = async (auth: string, path: string) => {
  const res = await as(auth).post('/webhooks', { url: `${world.base}${path}` });
  expect(res.status).toBe(201);
  return res.body as { id: string; livemode: boolean };
};

beforeAll(async () => {
  world = await startHttpsReceiver({
    '/live': (_q, res) => res.writeHead(204).end(),
    '/test': (_q, res) => res.writeHead(204).end(),
  });
  ctx = await createTestContext({ SIMULATOR_SPEED: '1000' });
  ({ tenantId, rcp, auth: live } = await receptionistTenant(ctx, { phoneNumber: RCP_PHONE }));
  const made = await ctx.deps.stores.apiKeys.create({
    tenantId,
    scopes: ['admin'],
    livemode: false,
  });
  expect(made.key).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
  test = `Bearer ${made.key}`;
  const liveSubscription = await subscribe(live, '/live');
  const testSubscription = await subscribe(test, '/test');
  expect([liveSubscription.livemode, testSubscription.livemode]).toEqual([true, false]);
  liveSub = liveSubscription.id;
  testSub = testSubscription.id;
  worker = await startTestWorker(ctx, {
    webhookCa: world.cert.cert,
    runner: { telephonyProvider: carrier },
  });
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const body = { receptionist_id: rcp, to: '+14155550123' };
  const t = await as(test).post('/calls/outbound', body);
  const l = await as(live).post('/calls/outbound', body);
  expect([t.status, l.status]).toEqual([202, 202]);
  testCall = t.body;
  liveCall = l.body;
});
afterAll(async () => {
  server?.close();
  await worker?.close();
  await ctx?.close();
  await world?.receiver.close();
});

describe('calls', () => {
  it("a test key's outbound call completes on the simulator, never on the configured carrier", async () => {
    expect(testCall.livemode).toBe(false);
    const call = await finished(test, testCall.id);
    // The simulator answers +1…0123, talks and books; the carrier would have made it busy.
    expect(call).toMatchObject({ status: 'completed', outcome: 'booked', livemode: false });
    await finished(live, liveCall.id);
    expect(dialled).toEqual([liveCall.id]);
  });

  it("a live key's call goes to the carrier and stays live", async () => {
    expect(liveCall.livemode).toBe(true);
    expect(await finished(live, liveCall.id)).toMatchObject({ status: 'busy', livemode: true });
  });

  it('each mode sees only its own calls: detail 404, absent from both lists', async () => {
    await finished(test, testCall.id);
    expect((await as(live).get(`/calls/${testCall.id}`)).status).toBe(404);
    expect((await as(test).get(`/calls/${liveCall.id}`)).status).toBe(404);
    for (const [auth, own, other] of [
      [live, liveCall.id, testCall.id],
      [test, testCall.id, liveCall.id],
    ] as const) {
      const tenantWide = (await as(auth).get('/calls')).body.calls.map((c: { id: string }) => c.id);
      const perReceptionist = (await as(auth).get(`/receptionists/${rcp}/calls`)).body.data.map(
        (c: { id: string }) => c.id,
      );
      for (const ids of [tenantWide, perReceptionist]) {
        expect(ids).toContain(own);
        expect(ids).not.toContain(other);
      }
    }
  });

  it('one Idempotency-Key in each mode makes a call in each mode', async () => {
    const body = { receptionist_id: rcp, to: '+14155550124' };
    const headers = { 'Idempotency-Key': 'same-key-both-modes' };
    const l = await as(live).post('/calls/outbound', body, headers);
    const t = await as(test).post('/calls/outbound', body, headers);
    expect([l.status, t.status]).toEqual([202, 202]);
    expect(t.headers['idempotent-replayed']).toBeUndefined();
    expect(t.body.id).not.toBe(l.body.id);
    expect([l.body.livemode, t.body.livemode]).toEqual([true, false]);
    const again = await as(test).post('/calls/outbound', body, headers);
    expect(again.body.id).toBe(t.body.id);
    await finished(test, t.body.id);
    await finished(live, l.body.id);
  });

  it('usage does not count test-mode calls', async () => {
    // A completed call counts in calls_completed whatever its minutes: this one must not.
    expect((await finished(test, testCall.id)).status).toBe('completed');
    for (const auth of [live, test]) {
      const usage = (await as(auth).get('/usage')).body;
      expect(usage).toMatchObject({ minutes_used: 0, calls_completed: 0, by_receptionist: [] });
    }
  });
});

describe('events and webhooks', () => {
  it("the test call's envelopes say livemode false and reach only the test subscription", async () => {
    await finished(test, testCall.id);
    const delivered = await waitFor('the test call delivered to the test subscription', () => {
      const mine = world.receiver.requests.filter(
        (r) => r.path === '/test' && JSON.parse(r.body).data?.call_id === testCall.id,
      );
      return mine.length >= 2 ? mine : undefined;
    });
    for (const r of delivered) expect(JSON.parse(r.body)).toMatchObject({ livemode: false });
    // Fanned out (no longer in the outbox): every delivery the events will ever have exists.
    const events = await eventIdsOf(testCall.id);
    expect(events.map((e) => e.livemode)).toEqual([false, false]);
    const deliveries = await ctx.deps
      .knex('webhook_deliveries')
      .whereIn(
        'event_id',
        events.map((e) => e.id),
      )
      .select('subscription_id', 'receptionist_id');
    expect(deliveries).toEqual([
      { subscription_id: testSub, receptionist_id: null },
      { subscription_id: testSub, receptionist_id: null },
    ]);
  });

  it("the live call's envelopes say livemode true and reach only the live subscription", async () => {
    await finished(live, liveCall.id);
    const delivered = await waitFor('the live call delivered', () => {
      const mine = world.receiver.requests.filter(
        (r) => JSON.parse(r.body).data?.call_id === liveCall.id,
      );
      return mine.length >= 1 ? mine : undefined;
    });
    for (const r of delivered) {
      expect(r.path).toBe('/live');
      expect(JSON.parse(r.body)).toMatchObject({ livemode: true });
    }
    const events = await eventIdsOf(liveCall.id);
    const deliveries = await ctx.deps
      .knex('webhook_deliveries')
      .whereIn(
        'event_id',
        events.map((e) => e.id),
      )
      .pluck('subscription_id');
    expect(deliveries).toEqual(events.map(() => liveSub));
  });

  it('GET /events and GET /events/{id} show each key the events of its mode only', async () => {
    await finished(test, testCall.id);
    await finished(live, liveCall.id);
    const [testEvents, liveEvents] = [await eventIdsOf(testCall.id), await eventIdsOf(liveCall.id)];
    const seen = async (auth: string) =>
      (await as(auth).get('/events?limit=100')).body.data as Array<{
        id: string;
        livemode: boolean;
      }>;
    const byTest = await seen(test);
    const byLive = await seen(live);
    expect(byTest.map((e) => e.id)).toEqual(expect.arrayContaining(testEvents.map((e) => e.id)));
    expect(byTest.every((e) => e.livemode === false)).toBe(true);
    expect(byLive.map((e) => e.id)).toEqual(expect.arrayContaining(liveEvents.map((e) => e.id)));
    expect(byLive.every((e) => e.livemode === true)).toBe(true);
    const testEvent = testEvents[0]?.id as string;
    expect((await as(test).get(`/events/${testEvent}`)).body).toMatchObject({ livemode: false });
    expect((await as(live).get(`/events/${testEvent}`)).status).toBe(404);
  });

  it('GET /events/stream streams the events of the key mode only', async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const stream = await openSse(baseUrl, `/api/v1/events/stream?created_from=${from}`, {
      Authorization: test,
    });
    try {
      expect(stream.status).toBe(200);
      const testEvents = await eventIdsOf(testCall.id);
      const messages = await stream.waitForMessages(testEvents.length);
      const ids = messages.map((m) => m.id);
      expect(ids).toEqual(expect.arrayContaining(testEvents.map((e) => e.id)));
      for (const m of messages) expect(JSON.parse(m.data)).toMatchObject({ livemode: false });
    } finally {
      stream.close();
    }
  });

  it('each mode lists and reads only its own subscriptions', async () => {
    const listed = async (auth: string) =>
      (await as(auth).get('/webhooks')).body.data.map((s: { id: string }) => s.id);
    expect(await listed(live)).toEqual([liveSub]);
    expect(await listed(test)).toEqual([testSub]);
    expect((await as(live).get(`/webhooks/${testSub}`)).status).toBe(404);
    expect((await as(test).get(`/webhooks/${liveSub}`)).status).toBe(404);
    expect((await as(test).get(`/webhooks/${testSub}`)).body).toMatchObject({ livemode: false });
    const ping = await as(test).post(`/webhooks/${testSub}/test`, {});
    expect(ping.body.payload).toMatchObject({ livemode: false });
  });
});

describe('what test mode does not cover', () => {
  it('refuses a test key with 403 live_mode_only: receptionist writes, MCP, portal', async () => {
    const refused = [
      await as(test).post('/receptionists', { name: 'Second desk' }),
      await as(test).post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      await as(test).post('/portal/sessions', {}),
    ];
    for (const res of refused) {
      expect([res.status, res.body.error?.code]).toEqual([403, 'live_mode_only']);
    }
    expect((await as(test).get('/receptionists')).status).toBe(200);
    // SMS, leads and campaigns have a mode (test/worker/test-mode-sms.test.ts).
    expect((await as(test).get('/leads/search')).status).toBe(200);
    expect((await as(test).get('/campaigns')).status).toBe(200);
  });
});

describe('DELETE /test-data', () => {
  it('is admin only', async () => {
    const { auth } = await ctx.keyFor(tenantId, ['write']);
    expect(
      (await request(ctx.app).delete('/api/v1/test-data').set('Authorization', auth)).status,
    ).toBe(403);
  });

  it('answers 202, wipes the test data (never the live), then emits test_data.deleted', async () => {
    const ended = await finished(test, testCall.id);
    expect(ended.livemode).toBe(false);
    const testEvents = await eventIdsOf(testCall.id);
    const liveEvents = await eventIdsOf(liveCall.id);
    expect(testEvents.length).toBeGreaterThan(0);

    const res = await request(ctx.app).delete('/api/v1/test-data').set('Authorization', live);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^tdd_/),
      status: 'running',
      created_at: expect.any(String),
      completed_at: null,
    });
    const deleted = await waitFor('test_data.deleted', async () => {
      const events = (await as(test).get('/events?type=test_data.deleted')).body.data;
      return events.find(
        (e: { data: { deletion_id: string } }) => e.data.deletion_id === res.body.id,
      );
    });
    expect(deleted).toMatchObject({ event: 'test_data.deleted', livemode: false });
    expect(deleted.receptionist_id).toBeUndefined();
    expect(deleted.data.calls_deleted).toBeGreaterThanOrEqual(1);
    expect(deleted.data.events_deleted).toBeGreaterThanOrEqual(testEvents.length);

    // The test data is gone...
    expect((await as(test).get(`/calls/${testCall.id}`)).status).toBe(404);
    expect((await as(test).get('/calls')).body.calls).toEqual([]);
    expect((await as(test).get(`/events/${testEvents[0]?.id}`)).status).toBe(404);
    const left = (await as(test).get('/events?limit=100')).body.data.map(
      (e: { event: string }) => e.event,
    );
    expect(left).toEqual(['test_data.deleted']);
    // ...the live data is all there...
    expect((await as(live).get(`/calls/${liveCall.id}`)).body).toMatchObject({ livemode: true });
    expect((await as(live).get(`/events/${liveEvents[0]?.id}`)).status).toBe(200);
    // ...and the test subscription, kept, hears of it.
    expect((await as(test).get(`/webhooks/${testSub}`)).status).toBe(200);
    const envelope = await waitFor('test_data.deleted delivered', () =>
      world.receiver.requests
        .filter((r) => r.path === '/test')
        .map((r) => JSON.parse(r.body))
        .find((b) => b.event === 'test_data.deleted'),
    );
    expect(envelope).toMatchObject({ livemode: false, data: { deletion_id: res.body.id } });
    expect(
      world.receiver.requests.some(
        (r) => r.path === '/live' && JSON.parse(r.body).event === 'test_data.deleted',
      ),
    ).toBe(false);
  });

  it('the SDK asks for a wipe with a test-mode admin key: client.testData.delete()', async () => {
    const client = new Switchboard({ apiKey: test.slice('Bearer '.length), baseUrl });
    const deletion = await client.testData.delete();
    expect(deletion).toMatchObject({ id: expect.stringMatching(/^tdd_/), status: 'running' });
    await waitFor('the second test_data.deleted', async () => {
      const events = (await as(test).get('/events?type=test_data.deleted')).body.data;
      return events.find(
        (e: { data: { deletion_id: string } }) => e.data.deletion_id === deletion.id,
      );
    });
  });
});
