import { enqueue, type EventJob } from '@switchboard/queues';
import { createWorkerDeps } from '../../apps/worker/src/deps';
import { startRelay } from '../../apps/worker/src/webhook-delivery/relay';
import { createLogger } from '@switchboard/logger';
import { createTestContext, type TestContext } from '../support/context';
import { startHttpsReceiver, type HttpsReceiver } from '../support/webhook-world';
import {
  emitCallStarted,
  startTestWorker,
  subscriber,
  waitFor,
  type TestWorker,
} from '../support/worker';

// The relay puts the deliveries it made into the event's job, and the job attempts those
// instead of reading them back with the fan-out statement (ARCHITECTURE.md, step 2). The
// claim still decides who attempts: a job run again, or one naming deliveries that are gone,
// sends nothing more.
let ctx: TestContext;
let https: HttpsReceiver;
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

const receivedIds = () =>
  https.receiver.requests.map((r) => String(r.headers['x-service-event-id']));

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
  worker ??= await startTestWorker(ctx, { webhookCa: https.cert.cert });
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
