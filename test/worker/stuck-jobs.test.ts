import type { IncomingMessage, ServerResponse } from 'node:http';
import { Queue, Worker } from 'bullmq';
import { catalog, closeRedis, createRedis, enqueue } from '@switchboard/queues';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { freeStuckJobs } from '../../apps/worker/src/stuck-jobs';
import { createTestContext, type TestContext } from '../support/context';
import {
  emitCallStarted,
  startTestWorker,
  subscriber,
  waitFor,
  type TestWorker,
} from '../support/worker';

// A worker that dies after taking a job and before claiming its row leaves the job in
// BullMQ's active list without a lock, under the id the reconciler would add it again with:
// that add is a no-op. The reconciler must free such a job itself, not wait for BullMQ's
// stalled check (made far longer than this test here, so that only the reconciler can help).
let ctx: TestContext;
let receiver: TestReceiver;
let worker: TestWorker | undefined;
let ca: string;

beforeAll(async () => {
  const cert = generateCertificate('IP:127.0.0.1');
  ca = cert.cert;
  receiver = await startReceiver(cert, {
    '/hook': (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(204).end(),
  });
  ctx = await createTestContext();
});
afterAll(async () => {
  await worker?.close();
  await Promise.all([ctx?.close(), receiver?.close()]);
});

/** A BullMQ worker on `queue` that takes one job and dies with it (its lock lapses in 1 s). */
async function dieHoldingOneJob(queue: string): Promise<void> {
  const connection = createRedis(ctx.config.redis, 'worker');
  let taken: () => void = () => undefined;
  const takenJob = new Promise<void>((resolve) => (taken = resolve));
  const dying = new Worker(
    queue,
    async () => {
      taken();
      await new Promise(() => undefined);
    },
    { connection, prefix: ctx.config.queuePrefix, lockDuration: 1000, stalledInterval: 600_000 },
  );
  await takenJob;
  await dying.close(true);
  await closeRedis(connection);
}

it('re-runs a delivery job stuck in active without a lock', async () => {
  const { tenant, receptionistId, subscription } = await subscriber(
    ctx,
    `https://127.0.0.1:${receiver.port}/hook`,
  );
  // An event already fanned out, with its delivery pending and overdue, and its job taken
  // by a worker that then died.
  const eventId = await emitCallStarted(ctx, tenant.tenantId, receptionistId);
  await ctx.deps.knex('event_outbox').where({ event_id: eventId }).delete();
  const [delivery] = (await ctx.deps
    .knex('webhook_deliveries')
    .insert({
      id: 'dlv_stuckjob1',
      tenant_id: tenant.tenantId,
      event_id: eventId,
      subscription_id: subscription.id,
      next_attempt_at: new Date(Date.now() - 60_000),
    })
    .returning('id')) as Array<{ id: string }>;
  const job = { v: 1 as const, deliveryId: delivery?.id as string, round: 1, attempt: 1 };
  const dying = dieHoldingOneJob(catalog.deliveries.queue);
  await enqueue(ctx.queues, 'deliveries', [{ data: job }]);
  await dying;
  expect(await ctx.queues.deliveries.getJobState(catalog.deliveries.jobId(job))).toBe('active');
  worker = await startTestWorker(ctx, {
    webhookCa: ca,
    // BullMQ's own recovery is out of reach of this test: only the reconciler can free it.
    runner: { lockDurationMs: 600_000, stalledIntervalMs: 600_000 },
  });
  await waitFor('the delivery to succeed', async () => {
    const row = await ctx.deps.knex('webhook_deliveries').where({ id: delivery?.id }).first();
    return row?.status === 'succeeded' ? true : undefined;
  });
  expect(receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId)).toHaveLength(
    1,
  );
});

it('leaves a job its live worker finishes while the reconciler looks at it', async () => {
  // A job taken by a live worker (active, locked), which finishes it right after the
  // reconciler has read its state: the reconciler must not take it for a dead worker's. A
  // queue of its own: the worker started above would take a deliveries job first.
  const connection = createRedis(ctx.config.redis, 'worker');
  const opts = { connection, prefix: ctx.config.queuePrefix };
  const queue = new Queue('stuck-check', opts);
  const live = new Worker('stuck-check', null, opts);
  try {
    const id = 'job-of-a-live-worker';
    await queue.add('check', {}, { jobId: id });
    const token = 'live-worker';
    const taken = await live.getNextJob(token);
    expect(taken?.id).toBe(id);
    expect(await queue.getJobState(id)).toBe('active');
    const finishingQueue = new Proxy(queue, {
      get(target, key, receiver) {
        if (key !== 'getJobState') return Reflect.get(target, key, receiver) as unknown;
        return async (jobId: string) => {
          const state = await target.getJobState(jobId);
          await taken?.moveToCompleted('done', token, false);
          return state;
        };
      },
    });
    const freed = await freeStuckJobs(ctx.deps.redis, finishingQueue, [id]);
    expect([...freed]).toEqual([]);
    // Whichever order it looked in, the job ends as its worker leaves it.
    await taken?.moveToCompleted('done', token, false).catch(() => undefined);
    expect(await queue.getJobState(id)).toBe('completed');
  } finally {
    await live.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await closeRedis(connection);
  }
});
