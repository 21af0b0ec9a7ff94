import type { IncomingMessage, ServerResponse } from 'node:http';
import { listDeliveryWrites, writesOf as writesRows } from '../support/row-writes';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// An event job's first attempts are taken, not claimed: the job's BullMQ lock holds them
// (apps/worker/src/webhook-delivery/first-attempt-lease.ts). A delivery whose first attempt
// succeeds is written twice: made by the relay, then its outcome. An attempt still running
// when its job stops waiting is claimed first, as any attempt. A trigger lists every write
// of every delivery row.
let world: WebhookWorld;
/** Answers of the `/slow` route, held until the test lets them go. */
const held: ServerResponse[] = [];

beforeAll(async () => {
  // The lease waits 5 s, not 250 ms: a loaded machine's slow turn does not make the first
  // test's attempt outlast it, and the second test's held request does.
  world = await startWebhookWorld(
    {
      '/hook': (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(204).end(),
      '/slow': (_req: IncomingMessage, res: ServerResponse) => void held.push(res),
    },
    { runner: { leaseWaitMs: 5_000 } },
  );
  // Before any event is emitted: the worker writes no delivery until then.
  await listDeliveryWrites(world.ctx.deps.knex);
}, 60_000);
afterAll(async () => {
  for (const res of held) res.writeHead(204).end();
  await world?.close();
});

const writesOf = (id: string) => writesRows(world.ctx.deps.knex, id);

const succeeded = (subscriptionId: string) =>
  waitFor('the delivery to succeed', async () => {
    const d = await world.ctx.deps
      .knex('webhook_deliveries')
      .where({ subscription_id: subscriptionId })
      .first();
    return d?.status === 'succeeded' ? d : undefined;
  });

it('a first attempt made in its event job writes its delivery twice: made, then its outcome', async () => {
  const { tenant, receptionistId, subscription } = await subscriber(
    world.ctx,
    `${world.base}/hook`,
  );
  await emitCallStarted(world.ctx, tenant.tenantId, receptionistId);
  const d = await succeeded(subscription.id);
  expect(d).toMatchObject({ attempts: 1, claims: 0, latest_attempt: 1 });
  expect(await writesOf(d.id)).toEqual([
    ['INSERT', 'pending', 0],
    ['UPDATE', 'succeeded', 0],
  ]);
}, 30_000);

it('an attempt still running when its job stops waiting is claimed first, then recorded once', async () => {
  const { tenant, receptionistId, subscription } = await subscriber(
    world.ctx,
    `${world.base}/slow`,
  );
  const eventId = await emitCallStarted(world.ctx, tenant.tenantId, receptionistId);
  // The receiver holds the request: the job stops waiting and claims the attempt.
  const d = await waitFor('the attempt in flight to be claimed', async () => {
    const row = await world.ctx.deps
      .knex('webhook_deliveries')
      .where({ subscription_id: subscription.id })
      .first();
    return row?.status === 'delivering' ? row : undefined;
  });
  expect(d).toMatchObject({ claims: 1, attempts: 0 });
  // The job ended with the claim made (it waits for it).
  await waitFor(
    'the event job to be done',
    async () => !(await world.ctx.queues.events.getJob(eventId)),
  );
  expect(held).toHaveLength(1);
  held.shift()?.writeHead(204).end();
  const done = await succeeded(subscription.id);
  expect(done).toMatchObject({ attempts: 1, claims: 0 });
  expect(await writesOf(d.id)).toEqual([
    ['INSERT', 'pending', 0],
    ['UPDATE', 'delivering', 1],
    ['UPDATE', 'succeeded', 0],
  ]);
  expect(
    world.receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId),
  ).toHaveLength(1);
}, 30_000);
