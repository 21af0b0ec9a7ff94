import { createLogger } from '@switchboard/logger';
import { enqueue, type EventJob } from '@switchboard/queues';
import { createWorkerDeps } from '../../apps/worker/src/deps';
import { startRelay } from '../../apps/worker/src/webhook-delivery/relay';
import { createTestContext, type TestContext } from '../support/context';
import { startHttpsReceiver, type HttpsReceiver } from '../support/webhook-world';
import {
  emitCallStarted,
  startTestWorker,
  subscriber,
  waitFor,
  type TestWorker,
} from '../support/worker';

// The relay fans an event out in its claim's transaction and adds the event job only after the
// commit, with the deliveries it made (docs/webhooks.md, "Inside", step 2). A relay that dies in
// between leaves the event published and fanned out, with due deliveries and no job: the
// reconciler must deliver them, once each. The job attempts the deliveries it carries instead of
// reading them back; the claim still decides who attempts, so a job run again, or one naming
// deliveries that are gone, sends nothing more.
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
    await ctx.deps.stores.deliveryLifecycle.publish(trx, ids);
  });
  expect(await ctx.deps.stores.events.pending(ids)).toEqual(new Set());
  // No worker runs yet, so nothing adds an event job: the count read once is the answer.
  expect(await ctx.queues.events.getJobCountByTypes('wait', 'prioritized', 'active')).toBe(0);

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

/** Adds an event job by hand and waits until a worker has taken it and finished. */
async function runEventJob(data: EventJob): Promise<void> {
  await enqueue(ctx.queues, 'events', [{ data }]);
  await waitFor(
    'the event job to be done',
    async () => !(await ctx.queues.events.getJob(data.eventId)),
  );
}

it('the event job carries the deliveries the relay made, and a second run of it sends nothing', async () => {
  const { tenant, receptionistId, subscription } = await subscriber(ctx, `${https.base}/hook`);
  const eventId = await emitCallStarted(ctx, tenant.tenantId, receptionistId);

  // The relay alone (no worker takes event jobs yet): its job stays in the queue to be read.
  const relayDeps = createWorkerDeps(ctx.config, { logger: createLogger('worker', 'silent') });
  const relay = startRelay(relayDeps);
  const job = await waitFor('the relay to add the event job', () =>
    ctx.queues.events.getJob(eventId),
  );
  await relay.close();
  await relayDeps.close();
  const [delivery] = await ctx.deps.knex('webhook_deliveries').where({ event_id: eventId });
  expect(job.data).toEqual({
    v: 1,
    eventId,
    tenantId: tenant.tenantId,
    deliveries: [{ id: delivery.id, subscriptionId: subscription.id }],
  });

  worker = await startTestWorker(ctx, { webhookCa: https.cert.cert });
  await waitFor('the delivery to be recorded', async () => {
    const row = await ctx.deps.knex('webhook_deliveries').where({ id: delivery.id }).first();
    return row?.status === 'succeeded';
  });
  // The same job again, as BullMQ would run it after its worker died: the claim is gone.
  await runEventJob(job.data as EventJob);
  // A later event delivered: the worker took everything before it.
  const later = await emitCallStarted(ctx, tenant.tenantId, receptionistId);
  await waitFor('a later event to be delivered', () => receivedIds().includes(later));
  expect(receivedIds().filter((id) => id === eventId)).toHaveLength(1);
  const row = await ctx.deps.knex('webhook_deliveries').where({ id: delivery.id }).first();
  expect(row).toMatchObject({ status: 'succeeded', attempts: 1 });
}, 60_000);

it('a job naming deliveries that do not exist (a fan-out lost in a crash) sends nothing', async () => {
  const { tenant, receptionistId, subscription } = await subscriber(ctx, `${https.base}/hook`);
  worker = await startTestWorker(ctx, { webhookCa: https.cert.cert });
  const lost = 'evt_lost_in_a_crash';
  await runEventJob({
    v: 1,
    eventId: lost,
    tenantId: tenant.tenantId,
    deliveries: [{ id: 'dlv_lost_in_a_crash', subscriptionId: subscription.id }],
  });
  const later = await emitCallStarted(ctx, tenant.tenantId, receptionistId);
  await waitFor('a later event to be delivered', () => receivedIds().includes(later));
  expect(receivedIds()).not.toContain(lost);
}, 60_000);
