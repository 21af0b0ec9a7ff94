import type { ServerResponse } from 'node:http';
import { Worker } from 'bullmq';
import { createLogger } from '@switchboard/logger';
import { catalog, enqueue, type EventJob } from '@switchboard/queues';
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

// The relay fans an event out in its claim's transaction and adds the event job only after
// the commit, with the deliveries it made, pre-claimed for the job's first run
// (ARCHITECTURE.md, step 2). A relay that dies in between leaves the event published and
// fanned out, with pre-claimed deliveries and no job: the reconciler must deliver them once
// their pre-claims lapse, once each. The job attempts the deliveries it carries instead of
// reading them back, writing each row once more only, with its outcome; a job run again, or
// one naming deliveries that are gone, sends nothing more, and a run after a stall leaves the
// first run's pre-claims alone.
let ctx: TestContext;
let https: HttpsReceiver;
/** Started by each test once the relay's part is done; each test begins without one. */
let worker: TestWorker | undefined;

/** When each request to `/timed` arrived (epoch ms), by event id. */
const arrivals = new Map<string, number>();
/** Requests to `/held` not answered yet, while `holding` (a test sets it). */
const held: ServerResponse[] = [];
let holding = false;

beforeAll(async () => {
  https = await startHttpsReceiver({
    '/hook': (_req, res) => void res.writeHead(204).end(),
    '/timed': (req, res) => {
      arrivals.set(String(req.headers['x-service-event-id']), Date.now());
      res.writeHead(204).end();
    },
    '/held': (_req, res) => void (holding ? held.push(res) : res.writeHead(204).end()),
  });
  ctx = await createTestContext();
  // Every write of a delivery row, in order (this test file's database only).
  await ctx.deps.knex.raw(`
    CREATE TABLE test_delivery_writes (n bigserial, delivery_id text, op text, status text);
    CREATE FUNCTION test_delivery_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO test_delivery_writes (delivery_id, op, status)
        VALUES (NEW.id, TG_OP, NEW.status);
        RETURN NEW;
      END $$;
    CREATE TRIGGER test_delivery_write AFTER INSERT OR UPDATE ON webhook_deliveries
      FOR EACH ROW EXECUTE FUNCTION test_delivery_write();`);
}, 60_000);
afterEach(async () => {
  holding = false;
  for (const res of held.splice(0)) res.writeHead(204).end();
  await worker?.close();
  worker = undefined;
});
afterAll(async () => {
  await https?.receiver.close();
  await ctx?.close();
});

/** A delivery's writes when made pre-claimed, then claimed by a delivery job, then recorded. */
const CLAIMED_BY_A_JOB = ['INSERT delivering', 'UPDATE delivering', 'UPDATE succeeded'];

const receivedIds = () =>
  https.receiver.requests.map((r) => String(r.headers['x-service-event-id']));

it('delivers the events of a relay that died between its commit and the job add', async () => {
  const { tenant, receptionistId } = await subscriber(ctx, `${https.base}/hook`);
  const ids = [
    await emitCallStarted(ctx, tenant.tenantId, receptionistId),
    await emitCallStarted(ctx, tenant.tenantId, receptionistId),
  ];
  // What the relay commits (claim + fan-out, one transaction), then dies: no event job, and
  // pre-claims (short here) that nobody holds.
  await ctx.deps.knex.transaction(async (trx) => {
    const { events } = await ctx.deps.stores.events.claimUnpublished(trx, 10);
    expect(events.map((e) => e.id).sort()).toEqual([...ids].sort());
    await ctx.deps.stores.deliveryLifecycle.fanOut(trx, ids, 1_000);
  });
  const events = await ctx.deps.knex('events').whereIn('id', ids);
  for (const e of events) {
    expect(e.published_at).not.toBeNull();
    expect(e.fanned_out_at).not.toBeNull();
  }
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
  // Each was claimed by a delivery job once its pre-claim lapsed.
  for (const r of rows) {
    expect(await writes(r.id)).toEqual(CLAIMED_BY_A_JOB);
  }
}, 60_000);

/** The writes of a delivery row, in order, as `OP status`. */
async function writes(deliveryId: string): Promise<string[]> {
  const rows = await ctx.deps
    .knex('test_delivery_writes')
    .where({ delivery_id: deliveryId })
    .orderBy('n');
  return rows.map((r) => `${r.op} ${r.status}`);
}

/** The relay alone (no worker takes event jobs yet) until it added the event's job. */
async function relayOnce(eventId: string, preclaimMs: number) {
  const relayDeps = createWorkerDeps(ctx.config, { logger: createLogger('worker', 'silent') });
  const relay = startRelay(relayDeps, { preclaimMs });
  const job = await waitFor('the relay to add the event job', () =>
    ctx.queues.events.getJob(eventId),
  );
  await relay.close();
  await relayDeps.close();
  return job;
}

/** Adds an event job by hand and waits until a worker has taken it and finished. */
async function runEventJob(data: EventJob): Promise<void> {
  await enqueue(ctx.queues, 'events', [{ data }]);
  await waitFor(
    'the event job to be done',
    async () => !(await ctx.queues.events.getJob(data.eventId)),
  );
}

it('the event job carries the deliveries the relay made, writes each row once more, and a second run sends nothing', async () => {
  const { tenant, receptionistId, subscription } = await subscriber(ctx, `${https.base}/hook`);
  const eventId = await emitCallStarted(ctx, tenant.tenantId, receptionistId);

  // The job stays in the queue to be read: no worker runs yet.
  const job = await relayOnce(eventId, 60_000);
  const [delivery] = await ctx.deps.knex('webhook_deliveries').where({ event_id: eventId });
  expect(job.data).toEqual({
    v: 1,
    eventId,
    tenantId: tenant.tenantId,
    preclaimed: true,
    deliveries: [{ id: delivery.id, subscriptionId: subscription.id }],
  });
  expect(delivery).toMatchObject({ status: 'delivering', claims: 0 });

  worker = await startTestWorker(ctx, { webhookCa: https.cert.cert });
  await waitFor('the delivery to be recorded', async () => {
    const row = await ctx.deps.knex('webhook_deliveries').where({ id: delivery.id }).first();
    return row?.status === 'succeeded';
  });
  // Made pre-claimed, attempted on that pre-claim: one write for the outcome, none to claim.
  expect(await writes(delivery.id)).toEqual(['INSERT delivering', 'UPDATE succeeded']);
  // The same job again, as a new job (a first run): its delivery is past the attempt.
  await runEventJob(job.data as EventJob);
  // A later event delivered: the worker took everything before it.
  const later = await emitCallStarted(ctx, tenant.tenantId, receptionistId);
  await waitFor('a later event to be delivered', () => receivedIds().includes(later));
  expect(receivedIds().filter((id) => id === eventId)).toHaveLength(1);
  const row = await ctx.deps.knex('webhook_deliveries').where({ id: delivery.id }).first();
  expect(row).toMatchObject({ status: 'succeeded', attempts: 1 });
}, 60_000);

it('a run after a stall leaves the first run its pre-claims: they lapse, then one job sends', async () => {
  const { tenant, receptionistId } = await subscriber(ctx, `${https.base}/timed`);
  const eventId = await emitCallStarted(ctx, tenant.tenantId, receptionistId);
  await relayOnce(eventId, 2_000);
  const [delivery] = await ctx.deps.knex('webhook_deliveries').where({ event_id: eventId });

  // A first run takes the job and goes silent (a worker stuck, or dead): BullMQ's manual
  // fetch, whose lock nobody renews.
  const stuck = new Worker(catalog.events.queue, undefined, {
    connection: ctx.queues.events.opts.connection,
    prefix: ctx.queues.events.opts.prefix,
    lockDuration: 500,
  });
  try {
    const taken = await stuck.getNextJob('stuck-run');
    expect(taken?.id).toBe(eventId);
    // The test worker's stalled check runs the job again (stalledCounter 1): not first.
    worker = await startTestWorker(ctx, { webhookCa: https.cert.cert });
    await waitFor('the event to be delivered', () => receivedIds().includes(eventId));
  } finally {
    await stuck.close();
  }
  await waitFor('the delivery to be recorded', async () => {
    const row = await ctx.deps.knex('webhook_deliveries').where({ id: delivery.id }).first();
    return row?.status === 'succeeded';
  });
  // Sent after the pre-claim lapsed, by a delivery job's claim: the re-run left it alone.
  expect(arrivals.get(eventId)).toBeGreaterThanOrEqual(new Date(delivery.locked_until).getTime());
  expect(await writes(delivery.id)).toEqual(CLAIMED_BY_A_JOB);
  expect(receivedIds().filter((id) => id === eventId)).toHaveLength(1);
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

it('a delivery handed on to a job (its lane full) keeps its pre-claim: the job renews it', async () => {
  holding = true;
  const { tenant, receptionistId } = await subscriber(ctx, `${https.base}/held`);
  // One delivery in flight per subscription: the second event's finds its lane full.
  const webhook = { ...ctx.config.webhook, maxInFlightPerSubscription: 1 };
  worker = await startTestWorker(ctx, {
    webhookCa: https.cert.cert,
    config: { ...ctx.config, webhook },
  });
  const first = await emitCallStarted(ctx, tenant.tenantId, receptionistId);
  await waitFor('the first delivery to be in flight', () => held.length === 1);
  const second = await emitCallStarted(ctx, tenant.tenantId, receptionistId);
  const delivery = await waitFor('the second delivery to be made', () =>
    ctx.deps.knex('webhook_deliveries').where({ event_id: second }).first(),
  );
  const job = await waitFor('the second delivery to be added parked', () =>
    ctx.queues.deliveries.getJob(`${delivery.id}-r1-a1`),
  );
  expect(job.data).toMatchObject({ deliveryId: delivery.id, preclaimed: true });
  // Still pre-claimed: nothing gave it back.
  expect(await writes(delivery.id)).toEqual(['INSERT delivering']);
  holding = false;
  for (const res of held.splice(0)) res.writeHead(204).end();
  await waitFor('both deliveries to be recorded', async () => {
    const rows = await ctx.deps.knex('webhook_deliveries').whereIn('event_id', [first, second]);
    return rows.length === 2 && rows.every((r) => r.status === 'succeeded');
  });
  // Made pre-claimed, claimed once by its job (the renewal), recorded.
  expect(await writes(delivery.id)).toEqual(CLAIMED_BY_A_JOB);
  expect(receivedIds().filter((id) => id === second)).toHaveLength(1);
}, 60_000);
