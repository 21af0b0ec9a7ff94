import { createTestContext, type TestContext } from '../support/context';
import { startHttpsReceiver, type HttpsReceiver } from '../support/webhook-world';
import {
  emitCallStarted,
  startTestWorker,
  subscriber,
  waitFor,
  type TestWorker,
} from '../support/worker';

// The relay claims an event and fans it out in one statement, its deliveries created
// claimed by it, and attempts them after the commit (docs/webhooks.md, "Inside", step 2). A
// relay that dies in between leaves the event published and fanned out, with claimed deliveries nobody attempts:
// once their claims lapse, the reconciler must deliver them, once each.
let ctx: TestContext;
let https: HttpsReceiver;
/** Started by each test once the relay's part is done; each test begins without one. */
let worker: TestWorker | undefined;

beforeAll(async () => {
  https = await startHttpsReceiver({ '/hook': (_req, res) => void res.writeHead(204).end() });
  ctx = await createTestContext();
}, 60_000);
afterEach(async () => {
  await worker?.close();
  worker = undefined;
});
afterAll(async () => {
  await https?.receiver.close();
  await ctx?.close();
});

const receivedIds = () =>
  https.receiver.requests.map((r) => String(r.headers['x-service-event-id']));

it('delivers the events of a relay that died between its commit and its attempts', async () => {
  const { tenant, receptionistId } = await subscriber(ctx, `${https.base}/hook`);
  const ids = [
    await emitCallStarted(ctx, tenant.tenantId, receptionistId),
    await emitCallStarted(ctx, tenant.tenantId, receptionistId),
  ];
  // What the relay commits (its batch: the claim and the fan-out, one statement), then dies.
  // Its claims are made short here (a second), so that they lapse soon.
  const batch = await ctx.deps.stores.deliveryLifecycle.publishNext(ctx.deps.knex, {
    after: '',
    otherRoom: 10,
    limit: 10,
    lockMs: 1_000,
  });
  const made = batch.made;
  expect(made.map((c) => c.delivery.eventId).sort()).toEqual([...ids].sort());
  expect(made.map((c) => c.delivery)).toMatchObject([
    { status: 'delivering', claims: 1 },
    { status: 'delivering', claims: 1 },
  ]);
  expect(await ctx.deps.stores.events.pending(ids)).toEqual(new Set());

  worker = await startTestWorker(ctx, { webhookCa: https.cert.cert });
  await waitFor(
    'both events to be delivered',
    () => ids.every((id) => receivedIds().includes(id)),
    {
      timeoutMs: 30_000,
    },
  );
  await waitFor('both deliveries to be recorded', async () => {
    const rows = await ctx.deps.knex('webhook_deliveries').whereIn('event_id', ids);
    return rows.length === 2 && rows.every((r) => r.status === 'succeeded') ? rows : undefined;
  });
  const rows = await ctx.deps.knex('webhook_deliveries').whereIn('event_id', ids);
  expect(rows.map((r) => r.attempts)).toEqual([1, 1]);
  expect(receivedIds().filter((id) => ids.includes(id))).toHaveLength(2);
}, 60_000);
