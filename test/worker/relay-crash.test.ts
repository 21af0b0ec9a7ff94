import { createTestContext, type TestContext } from '../support/context';
import { startHttpsReceiver, type HttpsReceiver } from '../support/webhook-world';
import {
  emitCallStarted,
  startTestWorker,
  subscriber,
  waitFor,
  type TestWorker,
} from '../support/worker';

// The relay fans an event out in its claim's transaction and adds the event job only after
// the commit (ARCHITECTURE.md, step 2). A relay that dies in between leaves the event
// published and fanned out, with due deliveries and no job: the reconciler must deliver
// them, once each.
let ctx: TestContext;
let https: HttpsReceiver;
/** Started only after the relay's work is done by hand (below). */
let worker: TestWorker | undefined;

beforeAll(async () => {
  https = await startHttpsReceiver({ '/hook': (_req, res) => void res.writeHead(204).end() });
  ctx = await createTestContext();
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await https?.receiver.close();
  await ctx?.close();
});

it('delivers the events of a relay that died between its commit and the job add', async () => {
  const { tenant, receptionistId } = await subscriber(ctx, `${https.base}/hook`);
  const ids = [
    await emitCallStarted(ctx, tenant.tenantId, receptionistId),
    await emitCallStarted(ctx, tenant.tenantId, receptionistId),
  ];
  // What the relay commits (claim + fan-out, one transaction), then dies: no event job.
  await ctx.deps.knex.transaction(async (trx) => {
    const { events } = await ctx.deps.stores.events.claimUnpublished(trx, 10);
    expect(events.map((e) => e.id).sort()).toEqual([...ids].sort());
    await ctx.deps.stores.deliveryLifecycle.fanOut(trx, ids);
  });
  const events = await ctx.deps.knex('events').whereIn('id', ids);
  for (const e of events) {
    expect(e.published_at).not.toBeNull();
    expect(e.fanned_out_at).not.toBeNull();
  }
  // No worker runs yet, so nothing adds an event job: the count read once is the answer.
  expect(await ctx.queues.events.getJobCountByTypes('wait', 'prioritized', 'active')).toBe(0);

  worker = await startTestWorker(ctx, { webhookCa: https.cert.cert });
  const receivedIds = () =>
    https.receiver.requests.map((r) => String(r.headers['x-service-event-id']));
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
