import type { IncomingMessage, ServerResponse } from 'node:http';
import { insertEvents, newId } from '@switchboard/db';
import { enqueueDeliveries } from '../../apps/worker/src/webhook-delivery/enqueue-deliveries';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext, type TestContext } from '../support/context';
import {
  callStartedData,
  emitCallStarted,
  startTestWorker,
  waitFor,
  type TestWorker,
} from '../support/worker';
import request from 'supertest';
import { fanOut } from '../support/fan-out';

// Issue 22, item 2, scaled down: tenant C's 40 subscriptions hang, and thousands of C's
// delivery jobs are queued at once (as a recovery, a resume or a wave of retries adds them;
// here added directly for C's fanned-out deliveries), to be refused by C's full lanes and
// parked. Tenant A's delivery job (the retry of an attempt its receiver refused) is added
// behind them. Judged by order, not by a clock: how many of C's jobs the workers take (and
// park) between A's first attempt and A's retry running. In one FIFO that is every C job
// queued ahead of it; when tenants take turns, a handful.
const HUNG_SUBSCRIPTIONS = 40;
const EVENTS = 75;
let ctx: TestContext;
let worker: TestWorker;
let receiver: TestReceiver;
const hung: ServerResponse[] = [];
const aAttempts: Array<{ parks: number; queued: number }> = [];

async function parks(): Promise<number> {
  const metric = await worker.deps.metrics.deliveryWaits.get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}
async function queued(): Promise<number> {
  const c = await worker.deps.queues.deliveries.getJobCounts('wait', 'prioritized');
  return (c.wait ?? 0) + (c.prioritized ?? 0);
}

beforeAll(async () => {
  const cert = generateCertificate('IP:127.0.0.1');
  receiver = await startReceiver(cert, {
    '/hung': (_req, res) => void hung.push(res),
    // A's receiver refuses the first attempt (so its retry is a delivery job), then answers.
    '/a': (_req: IncomingMessage, res) => {
      const first = aAttempts.length === 0;
      void Promise.all([parks(), queued()]).then(([p, q]) => {
        aAttempts.push({ parks: p, queued: q });
        res.writeHead(first ? 500 : 204).end();
      });
    },
  });
  ctx = await createTestContext({
    WORKER_CONCURRENCY: '8',
    WEBHOOK_TIMEOUT_MS: '20000',
    WEBHOOK_RETRY_BACKOFF_MS: '100',
  });
  worker = await startTestWorker(ctx, { webhookCa: cert.cert });
}, 60_000);
afterAll(async () => {
  for (const res of hung) res.destroy();
  await receiver?.close();
  await worker?.close();
  await ctx?.close();
});

async function tenantWith(urls: string[]) {
  const t = await ctx.tenant(['admin']);
  const rcp = await ctx.deps.stores.receptionists.create({
    tenantId: t.tenantId,
    name: 'Desk',
    status: 'ready',
  });
  for (const url of urls) {
    const res = await request(ctx.app)
      .post('/api/v1/webhooks')
      .set('Authorization', t.auth)
      .send({ url });
    expect(res.status).toBe(201);
  }
  return { tenantId: t.tenantId, receptionistId: rcp.id };
}

it("a tenant's hung endpoints do not queue in front of another tenant's deliveries", async () => {
  const base = `https://127.0.0.1:${receiver.port}`;
  const c = await tenantWith(Array.from({ length: HUNG_SUBSCRIPTIONS }, () => `${base}/hung`));
  const a = await tenantWith([`${base}/a`]);

  // C's events, fanned out here in the transaction that stores them (the relay never sees
  // them in the outbox): the rows of C's deliveries, then all their jobs in one add.
  const ids = Array.from({ length: EVENTS }, () => newId('evt'));
  const open = await ctx.deps.knex.transaction(async (trx) => {
    await insertEvents(
      trx,
      ids.map((id) => ({
        id,
        tenantId: c.tenantId,
        receptionistId: c.receptionistId,
        type: 'call.started',
        data: callStartedData(),
        createdAt: new Date(),
      })),
    );
    return fanOut(trx, ids);
  });
  expect(open).toHaveLength(EVENTS * HUNG_SUBSCRIPTIONS);
  await enqueueDeliveries(worker.deps, open);
  expect(await queued()).toBeGreaterThanOrEqual(1000);
  await emitCallStarted(ctx, a.tenantId, a.receptionistId);
  await waitFor('A to receive its retry', () => aAttempts.length >= 2, { timeoutMs: 120_000 });

  const [first, second] = aAttempts as [{ parks: number; queued: number }, { parks: number }];
  // C's jobs taken (and parked, C's lanes being full) while A's retry waited its turn.
  const takenMeanwhile = second.parks - first.parks;
  expect({
    queuedAtFirstAttempt: first.queued,
    takenMeanwhile,
    fewTakenFirst: takenMeanwhile < first.queued / 4,
  }).toMatchObject({ fewTakenFirst: true });
}, 300_000);
