import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { listDeliveryWrites, writesOf } from '../support/row-writes';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// A delivery job's first attempt is taken under the job's own lease, as an event job's is
// (apps/worker/src/webhook-delivery/deliver.ts): its delivery is written twice, made and
// outcome, whether its event job attempted it inline or handed it on. With two worker slots
// the inline budget is two, one for a tenant: an event of three subscriptions hands at
// least two of its deliveries to delivery jobs (at once, or parked behind the tenant's cap).
let world: WebhookWorld;

beforeAll(async () => {
  world = await startWebhookWorld(
    { '/hook': (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(204).end() },
    // A lease that outlasts any attempt here: a loaded machine never turns a take into a
    // claim (the claim after the lease is first-attempt-lease.test.ts's).
    { env: { WORKER_CONCURRENCY: '2' }, runner: { leaseWaitMs: 30_000 } },
  );
  await listDeliveryWrites(world.ctx.deps.knex);
}, 60_000);
afterAll(async () => {
  await world?.close();
});

/** First attempts so far by path (inline, job, parked), from the worker's counter. */
async function firstAttempts(): Promise<Record<string, number>> {
  const { values } = await world.worker.deps.metrics.firstAttempts.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.path), v.value]));
}

it('first attempts of delivery jobs write their deliveries twice: made, then the outcome', async () => {
  const { tenant, receptionistId } = await subscriber(world.ctx, `${world.base}/hook`);
  for (let i = 0; i < 2; i++) {
    const res = await request(world.ctx.app)
      .post('/api/v1/webhooks')
      .set('Authorization', tenant.auth)
      .send({ url: `${world.base}/hook` });
    expect(res.status).toBe(201);
  }
  const eventId = await emitCallStarted(world.ctx, tenant.tenantId, receptionistId);
  const { knex } = world.ctx.deps;
  const rows = await waitFor('the three deliveries to succeed', async () => {
    const all = (await knex('webhook_deliveries').where({ event_id: eventId })) as Array<{
      id: string;
      status: string;
      attempts: number;
      claims: number;
    }>;
    return all.length === 3 && all.every((d) => d.status === 'succeeded') ? all : undefined;
  });
  const paths = await firstAttempts();
  // Not all inline: the test holds only if delivery jobs made some of them.
  expect((paths.job ?? 0) + (paths.parked ?? 0)).toBeGreaterThanOrEqual(2);
  for (const d of rows) {
    expect(d).toMatchObject({ attempts: 1, claims: 0 });
    expect(await writesOf(knex, d.id)).toEqual([
      ['INSERT', 'pending', 0],
      ['UPDATE', 'succeeded', 0],
    ]);
  }
  expect(
    world.receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId),
  ).toHaveLength(3);
}, 60_000);
