import request from 'supertest';
import { verifyWebhook } from '@switchboard/sdk';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { createTestContext, type TestContext } from '../support/context';
import { messages, uid } from '../support/fixtures';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';
import { addReceptionist } from '../support/receptionist';

// 50 calls ending at the same moment, ingested concurrently by two API processes, carry a
// tenant over 80 % and 100 % of its plan: each threshold fires exactly once, with the total
// of the call that crossed it, and reaches a subscriber as a signed account-level event.
const PLAN_MINUTES = 90; // 80 % = 72 minutes (the 36th call), 100 % = 90 (the 45th)
const CALLS = 50; // 2 minutes each: 100 minutes in all

let ctx: TestContext;
let worker: TestWorker;
let receiver: TestReceiver;
let apis: ApiProcess[] = [];

beforeAll(async () => {
  const cert = generateCertificate('IP:127.0.0.1');
  receiver = await startReceiver(cert, { '/hooks': (_q, res) => res.writeHead(200).end() });
  ctx = await createTestContext();
  apis = await Promise.all([startApiProcess(ctx.config), startApiProcess(ctx.config)]);
  worker = await startTestWorker(ctx, { webhookCa: cert.cert });
}, 60_000);
afterAll(async () => {
  await Promise.all(apis.map((a) => a.stop()));
  await worker?.close();
  await ctx?.close();
  await receiver?.close();
});

it('fires each threshold exactly once across two API processes', async () => {
  const tenant = await ctx.deps.stores.tenants.create({
    name: `Race ${uid()}`,
    planMinutes: PLAN_MINUTES,
  });
  const { auth } = await ctx.keyFor(tenant.id, ['admin']);
  const rcp = await addReceptionist(ctx, tenant.id, { phoneNumber: '+14155550199' });
  const sub = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: `https://127.0.0.1:${receiver.port}/hooks`, events: ['usage.threshold'] });
  expect(sub.status).toBe(201);

  const endedAt = new Date();
  const startedAt = new Date(endedAt.getTime() - 90_000).toISOString();
  const ended = Array.from({ length: CALLS }, () =>
    messages.ended(rcp, `pc_${uid()}`, startedAt, endedAt.toISOString()),
  );
  // Sent as a carrier sends them: a 503 (this tenant's usage row takes the 50 calls one at a
  // time, so on a busy machine a request can wait longer than a pool connection may) is
  // retried after its Retry-After, as the ingestion contract asks; the event ids make the
  // retries harmless, and a threshold must still fire once.
  const ingest = async (m: object, api: ApiProcess): Promise<number[]> => {
    const seen: number[] = [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const r = await fetch(`${api.baseUrl}/internal/v1/telephony/events`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer test-ingest-token-0123456789',
        },
        body: JSON.stringify(m),
      });
      seen.push(r.status);
      if (r.status !== 503) break;
      const after = Number(r.headers.get('retry-after') ?? '1');
      await new Promise((resolve) => setTimeout(resolve, Math.min(after, 5) * 1000));
    }
    return seen;
  };
  const answers = await Promise.all(ended.map((m, i) => ingest(m, apis[i % 2] as ApiProcess)));
  expect(answers.filter((seen) => seen[seen.length - 1] !== 202)).toEqual([]);

  const usage = await request(ctx.app).get('/api/v1/usage').set('Authorization', auth);
  expect(usage.body).toMatchObject({ minutes_used: 2 * CALLS, calls_completed: CALLS });
  const events = await ctx.deps.stores.events.listForTenant(tenant.id, 'usage.threshold');
  expect(
    events
      .map((e) => ({ receptionistId: e.receptionistId, ...(e.data as { threshold: number }) }))
      .sort((a, b) => Number(a.threshold) - Number(b.threshold)),
  ).toEqual([
    {
      receptionistId: null,
      threshold: 80,
      minutes_used: 72,
      minutes_included: PLAN_MINUTES,
      billing_period_end: usage.body.billing_period_end,
    },
    {
      receptionistId: null,
      threshold: 100,
      minutes_used: 90,
      minutes_included: PLAN_MINUTES,
      billing_period_end: usage.body.billing_period_end,
    },
  ]);

  // Delivered (at least once each) as signed account-level envelopes.
  const delivered = await waitFor('both thresholds delivered', () => {
    const ids = new Set(receiver.requests.map((r) => r.headers['x-service-event-id']));
    return ids.size >= 2 ? receiver.requests : undefined;
  });
  expect(new Set(delivered.map((r) => r.headers['x-service-event-id']))).toEqual(
    new Set(events.map((e) => e.id)),
  );
  for (const r of delivered) {
    const envelope = JSON.parse(r.body);
    expect(Object.keys(envelope)).toEqual(['id', 'event', 'data', 'timestamp', 'livemode']);
    expect(envelope.event).toBe('usage.threshold');
    expect(() => verifyWebhook(r.body, r.headers, sub.body.signing_secret)).not.toThrow();
  }
}, 90_000);
