import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// A Redis outage longer than BullMQ's drainDelay (5 s) must not leave the worker idle once
// Redis is back: a class of BullMQ bugs did exactly that. This test runs a Redis server of
// its own (the shared one is never stopped) and restarts it, empty, under a running worker.
const DRAIN_DELAY_MS = 5000;
let redis: PrivateRedis;
let ctx: TestContext;
let world: WebhookWorld;
let receiver: TestReceiver;

beforeAll(async () => {
  redis = await startPrivateRedis();
  world = await startWebhookWorld(
    { '/hook': (_q, res) => res.writeHead(200).end() },
    { env: { REDIS_URL: redis.url } },
  );
  ({ receiver, ctx } = world);
});
afterAll(async () => {
  await world?.close();
  await redis?.stop();
});

it('consumes new jobs again after Redis was away longer than drainDelay', async () => {
  expect.hasAssertions();
  const { tenant, receptionistId, subscription } = await subscriber(
    ctx,
    `https://127.0.0.1:${receiver.port}/hook`,
  );
  const emitOne = () => emitCallStarted(ctx, tenant.tenantId, receptionistId);
  const deliveriesTo = (eventId: string) =>
    receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId);
  const delivery = (eventId: string) =>
    ctx.deps
      .knex('webhook_deliveries')
      .where({ subscription_id: subscription.id, event_id: eventId })
      .first();

  const before = await emitOne();
  await waitFor('delivery before the outage', () => deliveriesTo(before).length > 0);

  await redis.stop();
  const down = Date.now();
  // Events keep being committed while Redis is away: Postgres is the source of truth.
  const during = await emitOne();
  // The outage itself must outlast drainDelay: that is the condition under test, not a wait
  // for something to happen.
  await new Promise((r) => setTimeout(r, DRAIN_DELAY_MS + 3000));
  await redis.start(); // empty: every queued job is lost, only the rows remain
  expect(Date.now() - down).toBeGreaterThan(DRAIN_DELAY_MS);

  const after = await emitOne();
  const bounds = { timeoutMs: 30_000, intervalMs: 100 };
  await waitFor(
    'delivery of the event committed after the restart',
    async () => {
      return deliveriesTo(after).length > 0 && (await delivery(after))?.status === 'succeeded';
    },
    bounds,
  );
  await waitFor(
    'delivery of the event committed during the outage',
    async () => {
      return deliveriesTo(during).length > 0 && (await delivery(during))?.status === 'succeeded';
    },
    bounds,
  );
  for (const eventId of [before, during, after]) {
    const row = await delivery(eventId);
    expect(row).toMatchObject({ status: 'succeeded' });
    expect(deliveriesTo(eventId).length).toBeGreaterThanOrEqual(1);
  }
}, 90_000);
