import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { emit } from '@switchboard/events';
import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, waitFor } from '../support/worker';
import { receptionistTenant } from '../support/receptionist';

// One tenant has 60 subscriptions to a receiver that never answers and keeps emitting
// events; another tenant's healthy subscription must still get every delivery. Without a
// tenant's share of the first attempts and the in-flight caps, the dead receiver's
// deliveries take every worker slot until their attempts end, and the healthy one queues
// behind them. Here no dead attempt ends during the test (the attempt timeout is the longest
// allowed, beyond the wait for the healthy deliveries): the healthy deliveries must all
// arrive while every dead attempt is still open. That holds on a machine of any speed, and
// fails (by the wait's timeout) without those limits. How soon a healthy delivery arrives
// beside a dead endpoint (sooner than one attempt timeout) is a wall-clock figure, judged by
// test/chaos/stuck-receiver.test.ts in `npm run chaos:quick`.
const NOISY_SUBSCRIPTIONS = 60;
const HEALTHY_EVENTS = 20;
const TIMEOUT_MS = 120_000;
let ctx: TestContext;
let world: WebhookWorld;
let receiver: TestReceiver;
const hung: ServerResponse[] = [];
let deadEnded = 0;
const received = new Set<string>();

beforeAll(async () => {
  world = await startWebhookWorld(
    {
      '/dead': (_req, res) => {
        hung.push(res);
        res.once('close', () => deadEnded++);
      },
      '/healthy': (req: IncomingMessage, res) => {
        received.add(String(req.headers['x-service-event-id']));
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
  return { tenantId: t.tenantId, emit: () => emitCallStarted(ctx, t.tenantId, rcp) };
}

it("a dead receiver's 60 subscriptions do not delay another tenant's delivery", async () => {
  const base = `https://127.0.0.1:${receiver.port}`;
  const noisy = await tenantWith(Array.from({ length: NOISY_SUBSCRIPTIONS }, () => `${base}/dead`));
  const healthy = await tenantWith([`${base}/healthy`]);

  // The noisy tenant emits an event (60 deliveries) before every other healthy one.
  await noisy.emit();
  await waitFor(
    'the dead receiver to hold as many attempts as the tenant may have open',
    () => hung.length >= ctx.config.webhook.maxInFlightPerTenant,
  );
  const healthyIds: string[] = [];
  for (let i = 0; i < HEALTHY_EVENTS; i++) {
    if (i % 2 === 1) await noisy.emit();
    healthyIds.push(await healthy.emit());
  }
  const endedWhenAllArrived = await waitFor(
    'every healthy delivery',
    () => healthyIds.every((id) => received.has(id)) && { ended: deadEnded },
    { timeoutMs: 60_000 },
  );
  // Every healthy delivery arrived while the dead receiver held every attempt it was sent:
  // none waited for a dead attempt's slot. The noise was real: the noisy tenant had as many
  // attempts open as its cap allows, and deliveries waiting behind them (at least the first
  // event's, which fanned out before the first healthy event was emitted).
  expect(endedWhenAllArrived).toEqual({ ended: 0 });
  expect(hung.length).toBe(ctx.config.webhook.maxInFlightPerTenant);
  const waiting = await ctx.deps
    .knex('webhook_deliveries')
    .where({ tenant_id: noisy.tenantId })
    .whereIn('status', ['pending', 'delivering'])
    .count<{ count: string }[]>({ count: '*' });
  expect(Number(waiting[0]?.count)).toBeGreaterThanOrEqual(NOISY_SUBSCRIPTIONS);
}, 120_000);

it("a tenant's dead subscription does not delay its own healthy one", async () => {
  const base = `https://127.0.0.1:${receiver.port}`;
  const { rcp, ...t } = await receptionistTenant(ctx);
  // The dead subscription takes call.started, the healthy one call.completed: the first
  // attempts of the one cannot take the other's units, whatever their order in a fan-out.
  for (const [url, type] of [
    [`${base}/dead`, 'call.started'],
    [`${base}/healthy`, 'call.completed'],
  ] as const) {
    const res = await request(ctx.app)
      .post('/api/v1/webhooks')
      .set('Authorization', t.auth)
      .send({ url, events: [type] });
    expect(res.status).toBe(201);
  }
  const cap = ctx.config.webhook.maxInFlightPerSubscription;
  const before = hung.length;
  // One at a time: each dead first attempt takes a unit of the tenant's share, until its
  // lane is at its cap, which is the share's size (half the budget each), every one open.
  for (let i = 1; i <= cap; i++) {
    await emitCallStarted(ctx, t.tenantId, rcp);
    await waitFor(`dead attempt ${i} open`, () => hung.length >= before + i);
  }
  const ids: string[] = [];
  for (let i = 0; i < HEALTHY_EVENTS; i++) {
    ids.push(
      await ctx.deps.knex.transaction((trx) =>
        emit(trx, {
          tenantId: t.tenantId,
          receptionistId: rcp,
          type: 'call.completed',
          data: {
            call_id: `call_mixed_${i}`,
            direction: 'inbound',
            from: '+14155550100',
            to: '+14155550199',
            duration_seconds: 30,
            outcome: 'message_taken',
            customer_name: null,
            customer_phone: null,
            transcript_summary: null,
            started_at: new Date(Date.now() - 30_000).toISOString(),
            ended_at: new Date().toISOString(),
          },
        }),
      ),
    );
  }
  // Every event reaches the healthy subscription while no dead attempt has ended: none waited
  // for its own tenant's dead attempts to time out.
  const endedWhenAllArrived = await waitFor(
    'every delivery to the healthy subscription',
    () => ids.every((id) => received.has(id)) && { ended: deadEnded },
    { timeoutMs: 60_000 },
  );
  expect(endedWhenAllArrived).toEqual({ ended: 0 });
  expect(hung.length).toBe(before + cap);
}, 120_000);
