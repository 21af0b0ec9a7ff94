import { subscribedTenant, type SubscribedTenant } from '../support/subscribed-tenant';
import { emitCallStarted, waitFor, type TestWorker } from '../support/worker';

// switchboard_first_attempts_total{path} counts each new delivery's first attempt by how its
// event's job made it (docs/OPERATIONS.md): with room in its lanes and in the inline budget,
// inline; the two other paths stay at zero.
let world: SubscribedTenant;
let worker: TestWorker;

beforeAll(async () => {
  world = await subscribedTenant({ phoneNumber: '+14155550100', events: ['call.started'] });
  worker = await world.startWorker();
}, 60_000);
afterAll(() => world?.close());

async function firstAttempts(): Promise<Record<string, number>> {
  const { values } = await worker.deps.metrics.firstAttempts.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.path), v.value]));
}

it('counts a first attempt made in its event job as inline', async () => {
  expect(await firstAttempts()).toEqual({});
  const eventId = await emitCallStarted(world.ctx, world.tenantId, world.rcp);
  await waitFor('the event to be delivered', () =>
    world.receiver.requests.some((r) => r.headers['x-service-event-id'] === eventId),
  );
  await waitFor('the first attempt to be counted', async () => (await firstAttempts()).inline);
  expect(await firstAttempts()).toEqual({ inline: 1 });
});

it("times the relay's batch that published an event (switchboard_relay_batch_seconds)", async () => {
  const batches = async () => {
    const { values } = await worker.deps.metrics.relayBatches.get();
    const at = (name: string) => values.find((v) => v.metricName === name)?.value ?? 0;
    return {
      count: at('switchboard_relay_batch_seconds_count'),
      sum: at('switchboard_relay_batch_seconds_sum'),
    };
  };
  const before = await batches();
  const eventId = await emitCallStarted(world.ctx, world.tenantId, world.rcp);
  await waitFor('the event to be delivered', () =>
    world.receiver.requests.some((r) => r.headers['x-service-event-id'] === eventId),
  );
  // The relay published it before its attempt was made: its batch is counted by then.
  const after = await batches();
  expect(after.count).toBeGreaterThan(before.count);
  expect(after.sum).toBeGreaterThan(before.sum);
});
