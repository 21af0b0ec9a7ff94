import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { emitMany } from '@switchboard/events';
import {
  generateCertificate,
  startReceiver,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext, type TestContext } from '../support/context';
import { emitCallStarted, startTestWorker, waitFor, type TestWorker } from '../support/worker';
import request from 'supertest';

// Issue 22, item 2, scaled down: tenant C's 40 subscriptions hang and its burst of events
// leaves thousands of delivery jobs queued (refused by C's full lanes, parked, re-woken).
// Tenant A's delivery job (the retry of an attempt its receiver refused) is added behind
// them. Judged by order, not by a clock: how many of C's jobs the workers take (and park)
// between A's job being added and A's job running. In one FIFO that is every C job queued
// ahead of it; when tenants take turns, a handful.
const HUNG_SUBSCRIPTIONS = 40;
const EVENTS = 150;
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

  await ctx.deps.knex.transaction((trx) =>
    emitMany(
      trx,
      Array.from({ length: EVENTS }, () => ({
        tenantId: c.tenantId,
        receptionistId: c.receptionistId,
        type: 'call.started' as const,
        data: {
          call_id: `call_${randomBytes(8).toString('hex')}`,
          direction: 'inbound' as const,
          from: '+14155550100',
          to: '+14155550199',
          started_at: new Date().toISOString(),
        },
      })),
    ),
  );
  // A emits once C's jobs are queued in numbers.
  await waitFor('C to have delivery jobs queued', async () => (await queued()) >= 1000, {
    timeoutMs: 120_000,
    intervalMs: 10,
  });
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
