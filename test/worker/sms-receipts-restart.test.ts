import request from 'supertest';
import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { subscribedTenant } from '../support/subscribed-tenant';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';

// The simulated carrier's receipts outlive the worker that sent the messages: each is a
// delayed job in Redis, so a worker stopped before a receipt is due loses nothing and the
// next worker applies it (sms.delivered / sms.failed at the webhook, after the restart).
const RCP_PHONE = '+14155550330';
// Far beyond the test: the first worker stops long before the carrier would report.
const RECEIPT_DELAY_MS = 600_000;

let ctx: TestContext;
let receiver: TestReceiver;
let webhookCa: string;
let auth: string;
let tenantId: string;
let rcp: string;
const workers: TestWorker[] = [];

const accept = async (to: string) => {
  const res = await request(ctx.app)
    .post('/api/v1/sms/send')
    .set('Authorization', auth)
    .send({ receptionist_id: rcp, to, message: 'Your engineer arrives between 8 and 10 am.' });
  expect(res.status).toBe(202);
  return (res.body as { id: string }).id;
};
const detail = async (id: string) =>
  (await request(ctx.app).get(`/api/v1/sms/${id}`).set('Authorization', auth)).body as {
    status: string;
    error_code: string | null;
  };
const receivedEvents = (id: string) =>
  receiver.requests
    .map((r) => JSON.parse(r.body) as { event: string; data: { sms_id?: string } })
    .filter((b) => b.data.sms_id === id)
    .map((b) => b.event)
    .sort();

beforeAll(async () => {
  let cert;
  ({ ctx, receiver, cert, auth, tenantId, rcp } = await subscribedTenant({
    env: { SIMULATOR_SPEED: '100' },
    phoneNumber: RCP_PHONE,
    events: ['sms.sent', 'sms.delivered', 'sms.failed'],
  }));
  webhookCa = cert.cert;
});
afterAll(async () => {
  for (const w of workers) await w.close();
  await ctx?.close();
  await receiver?.close();
});

it('a receipt not yet due when the worker stops is applied by the next worker', async () => {
  const first = await startTestWorker(ctx, {
    webhookCa,
    runner: { smsSimulator: { receiptDelayMs: RECEIPT_DELAY_MS } },
  });
  workers.push(first);
  const delivered = await accept('+14155550331');
  const undelivered = await accept('+14155550004');
  for (const id of [delivered, undelivered]) {
    await waitFor(`SMS ${id} sent`, async () => (await detail(id)).status === 'sent');
  }
  // The carrier's receipts wait in Redis, not in the worker.
  const receipts = ctx.queues.smsSimulatorReceipts;
  for (const id of [delivered, undelivered]) {
    expect(await (await receipts.getJob(id))?.isDelayed()).toBe(true);
  }
  await first.close();
  workers.splice(workers.indexOf(first), 1);
  expect((await detail(delivered)).status).toBe('sent');
  expect((await detail(undelivered)).status).toBe('sent');

  // A new worker; the carrier's moment comes (the due time is the only thing moved).
  workers.push(await startTestWorker(ctx, { webhookCa }));
  for (const id of [delivered, undelivered]) await (await receipts.getJob(id))?.promote();

  const done = await waitFor('both receipts applied after the restart', async () => {
    const [a, b] = [await detail(delivered), await detail(undelivered)];
    return a.status === 'delivered' && b.status === 'undelivered' ? { a, b } : undefined;
  });
  expect(done.b.error_code).toBe('unreachable_handset');
  const events = await ctx.deps.stores.events.listForTenant(tenantId);
  const typesOf = (id: string) =>
    events
      .filter((e) => e.data.sms_id === id)
      .map((e) => e.type)
      .sort();
  expect(typesOf(delivered)).toEqual(['sms.delivered', 'sms.sent']);
  expect(typesOf(undelivered)).toEqual(['sms.failed', 'sms.sent']);
  await waitFor('sms.delivered and sms.failed at the webhook', () =>
    receivedEvents(delivered).length === 2 && receivedEvents(undelivered).length === 2
      ? true
      : undefined,
  );
  expect(receivedEvents(delivered)).toEqual(['sms.delivered', 'sms.sent']);
  expect(receivedEvents(undelivered)).toEqual(['sms.failed', 'sms.sent']);
});
