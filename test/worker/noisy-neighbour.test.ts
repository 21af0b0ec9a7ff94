import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, waitFor } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';

// One tenant has 60 subscriptions to a receiver that never answers and keeps emitting
// events; another tenant's healthy subscription must still get each delivery within a
// second. Without in-flight caps the dead receiver's deliveries take every worker slot for
// WEBHOOK_TIMEOUT_MS at a time and the healthy one queues behind them for seconds.
const NOISY_SUBSCRIPTIONS = 60;
const TIMEOUT_MS = 5000;
const HEALTHY_EVENTS = 20;
let ctx: TestContext;
let world: WebhookWorld;
let receiver: TestReceiver;
const hung: ServerResponse[] = [];
const receivedAt = new Map<string, number>();

beforeAll(async () => {
  world = await startWebhookWorld(
    {
      '/dead': (_req, res) => void hung.push(res),
      '/healthy': (req: IncomingMessage, res) => {
        receivedAt.set(String(req.headers['x-service-event-id']), Date.now());
        res.writeHead(204).end();
      },
    },
    { env: { WORKER_CONCURRENCY: '8', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } },
  );
  ({ receiver, ctx } = world);
  // The default caps for 8 slots: 4 per subscription, 6 per tenant.
  expect(ctx.config.webhook).toMatchObject({
    maxInFlightPerSubscription: 4,
    maxInFlightPerTenant: 6,
  });
}, 60_000);
afterAll(() => world?.close());

async function tenantWith(urls: string[]) {
  const { rcp, ...t } = await receptionistTenant(ctx);
  for (const url of urls) {
    const res = await request(ctx.app)
      .post('/api/v1/webhooks')
      .set('Authorization', t.auth)
      .send({ url });
    expect(res.status).toBe(201);
  }
  return () => emitCallStarted(ctx, t.tenantId, rcp);
}

it("a dead receiver's 60 subscriptions do not delay another tenant's delivery", async () => {
  const base = `https://127.0.0.1:${receiver.port}`;
  const noisy = await tenantWith(Array.from({ length: NOISY_SUBSCRIPTIONS }, () => `${base}/dead`));
  const healthy = await tenantWith([`${base}/healthy`]);

  // The noisy tenant emits an event every 1.5 s (60 deliveries each) for the whole test.
  let stop = false;
  const noise = (async () => {
    while (!stop) {
      await noisy();
      await new Promise((r) => setTimeout(r, 1500));
    }
  })();
  await waitFor('the dead receiver to hold requests', () => hung.length >= 6);

  const committedAt = new Map<string, number>();
  for (let i = 0; i < HEALTHY_EVENTS; i++) {
    const id = await healthy();
    committedAt.set(id, Date.now());
    await new Promise((r) => setTimeout(r, 400));
  }
  await waitFor('every healthy delivery', () => receivedAt.size === HEALTHY_EVENTS, {
    timeoutMs: 60_000,
  });
  stop = true;
  await noise;
  const latencies = [...committedAt]
    .map(([id, at]) => (receivedAt.get(id) as number) - at)
    .sort((a, b) => a - b);
  // The noise was real: deliveries to the dead receiver kept timing out all along.
  expect(hung.length).toBeGreaterThanOrEqual(12);
  // A delivery stuck behind the dead receiver's slots would wait WEBHOOK_TIMEOUT_MS or more
  // (without the caps none of them arrives within a minute). The typical one is well under
  // a second; a generous bound on the slowest absorbs a loaded machine.
  const p50 = latencies[Math.floor(latencies.length / 2)] as number;
  const max = latencies[latencies.length - 1] as number;
  // (On a failure the message shows every latency.)
  expect({ p50Under1s: p50 < 1000, maxUnderTimeout: max < TIMEOUT_MS, latencies }).toMatchObject({
    p50Under1s: true,
    maxUnderTimeout: true,
  });
}, 120_000);
