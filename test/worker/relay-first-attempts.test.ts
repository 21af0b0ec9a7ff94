import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { listDeliveryWrites, writesOf as writesRows } from '../support/row-writes';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// The relay creates its deliveries claimed and makes their first attempts itself
// (apps/worker/src/webhook-delivery/first-attempts.ts): a delivery whose first attempt
// succeeds is written twice, made (claimed) and its outcome, however long the receiver takes.
// One the relay cannot attempt now (no budget, lane full) is given back and handed to a
// delivery job, which claims it: written twice more, still sent once. With two worker slots
// the budget is two, one per tenant. A trigger lists every write of every delivery row.
let world: WebhookWorld;
/** Answers of the `/slow` route, held until the test lets them go. */
const held: ServerResponse[] = [];

beforeAll(async () => {
  world = await startWebhookWorld(
    {
      '/hook': (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(204).end(),
      '/slow': (_req: IncomingMessage, res: ServerResponse) => void held.push(res),
    },
    { env: { WORKER_CONCURRENCY: '2' } },
  );
  // Before any event is emitted: the worker writes no delivery until then.
  await listDeliveryWrites(world.ctx.deps.knex);
}, 60_000);
afterAll(async () => {
  for (const res of held) res.writeHead(204).end();
  await world?.close();
});

const writesOf = (id: string) => writesRows(world.ctx.deps.knex, id);
const posts = (eventId: string) =>
  world.receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId);

const succeeded = (subscriptionId: string) =>
  waitFor('the delivery to succeed', async () => {
    const d = await world.ctx.deps
      .knex('webhook_deliveries')
      .where({ subscription_id: subscriptionId })
      .first();
    return d?.status === 'succeeded' ? d : undefined;
  });

/** First attempts so far by path (inline, job, parked), from the worker's counter. */
async function firstAttempts(): Promise<Record<string, number>> {
  const { values } = await world.worker.deps.metrics.firstAttempts.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.path), v.value]));
}

const MADE_THEN_OUTCOME = [
  ['INSERT', 'delivering', 1],
  ['UPDATE', 'succeeded', 0],
];

it("the relay's first attempt writes its delivery twice: made claimed, then its outcome", async () => {
  const { tenant, receptionistId, subscription } = await subscriber(
    world.ctx,
    `${world.base}/hook`,
  );
  const eventId = await emitCallStarted(world.ctx, tenant.tenantId, receptionistId);
  const d = await succeeded(subscription.id);
  expect(d).toMatchObject({ attempts: 1, claims: 0, latest_attempt: 1 });
  expect(await writesOf(d.id)).toEqual(MADE_THEN_OUTCOME);
  expect(posts(eventId)).toHaveLength(1);
  expect(await firstAttempts()).toEqual({ inline: 1 });
}, 30_000);

it('first attempts the relay hands to delivery jobs are claimed by them, and sent once', async () => {
  const { tenant, receptionistId } = await subscriber(world.ctx, `${world.base}/hook`);
  for (let i = 0; i < 2; i++) {
    const res = await request(world.ctx.app)
      .post('/api/v1/webhooks')
      .set('Authorization', tenant.auth)
      .send({ url: `${world.base}/hook` });
    expect(res.status).toBe(201);
  }
  const before = await firstAttempts();
  const eventId = await emitCallStarted(world.ctx, tenant.tenantId, receptionistId);
  const { knex } = world.ctx.deps;
  const rows = await waitFor('the three deliveries to succeed', async () => {
    const all = (await knex('webhook_deliveries').where({ event_id: eventId })) as Array<{
      id: string;
      status: string;
    }>;
    return all.length === 3 && all.every((d) => d.status === 'succeeded') ? all : undefined;
  });
  const paths = await firstAttempts();
  // One unit for the tenant: the relay makes one and hands the other two on.
  expect((paths.inline ?? 0) - (before.inline ?? 0)).toBe(1);
  expect((paths.job ?? 0) + (paths.parked ?? 0)).toBe(2);
  const writes = await Promise.all(rows.map((d) => writesOf(d.id)));
  expect(writes.filter((w) => w.length === 2)).toEqual([MADE_THEN_OUTCOME]);
  for (const w of writes.filter((w) => w.length !== 2)) {
    expect(w).toEqual([
      ['INSERT', 'delivering', 1],
      ['UPDATE', 'pending', 0],
      ['UPDATE', 'delivering', 1],
      ['UPDATE', 'succeeded', 0],
    ]);
  }
  expect(posts(eventId)).toHaveLength(3);
}, 60_000);

it('an attempt whose receiver is slow stays claimed, and is recorded and sent once', async () => {
  const { tenant, receptionistId, subscription } = await subscriber(
    world.ctx,
    `${world.base}/slow`,
  );
  const eventId = await emitCallStarted(world.ctx, tenant.tenantId, receptionistId);
  await waitFor('the receiver to hold the request', () => held.length === 1);
  const d = await world.ctx.deps
    .knex('webhook_deliveries')
    .where({ subscription_id: subscription.id })
    .first();
  expect(d).toMatchObject({ status: 'delivering', claims: 1, attempts: 0 });
  held.shift()?.writeHead(204).end();
  const done = await succeeded(subscription.id);
  expect(done).toMatchObject({ attempts: 1, claims: 0 });
  expect(await writesOf(d.id)).toEqual(MADE_THEN_OUTCOME);
  expect(posts(eventId)).toHaveLength(1);
}, 30_000);
