import type { ClaimedDelivery } from '@switchboard/db';
import { catalog } from '@switchboard/queues';
import { createLogger } from '@switchboard/logger';
import { createWorkerDeps, type WorkerDeps } from '../../apps/worker/src/deps';
import type { Attempt } from '../../apps/worker/src/webhook-delivery/deliver';
import { createDeliveryBatches } from '../../apps/worker/src/webhook-delivery/delivery-batches';
import { FirstAttempts } from '../../apps/worker/src/webhook-delivery/first-attempts';
import { InFlightLanes } from '../../apps/worker/src/webhook-delivery/in-flight';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/wait';

// A first attempt refused by its full lane, while its own process holds some of that lane's
// slots, waits (claimed, its unit held) for the next slot one of them frees instead of being
// given back and parked: two workers on one busy subscription no longer park a quarter of
// their first attempts (docs/decisions/0131-a-refused-first-attempt-waits-for-its-process.md).
// Real Redis and Postgres, the test's own prefix and database; the attempts are the test's
// (each says when its POST is over).
let ctx: TestContext;
let deps: WorkerDeps;
beforeAll(async () => {
  ctx = await createTestContext();
  deps = createWorkerDeps(ctx.config, { logger: createLogger('worker', 'silent') });
});
afterAll(async () => {
  await deps.close();
  await ctx.close();
});

const claimedOf = (id: string, targetId: string) =>
  ({
    delivery: { id, tenantId: 'ten_waits', subscriptionId: targetId, receptionistId: null },
  }) as unknown as ClaimedDelivery;

/** A process's first attempts on a lane capped at one, each POST open until `finish(id)`. */
function firstAttempts() {
  const lanes = new InFlightLanes(
    deps.redis,
    ctx.config.queuePrefix,
    deps.queues.deliveries,
    catalog.deliveries.name,
    { perTarget: 1, perTenant: 100, slotTtlMs: 60_000 },
  );
  const open = new Map<string, () => void>();
  const sent: string[] = [];
  const attempt: Attempt = (request, claim) =>
    new Promise((resolve) => {
      sent.push(request.deliveryId);
      open.set(request.deliveryId, () => {
        claim?.onSent?.();
        resolve(undefined);
      });
    });
  const batches = createDeliveryBatches(deps.knex, 60_000, deps.stores.deliveryLifecycle);
  const first = new FirstAttempts(deps, batches, lanes, attempt, 4);
  const finish = (id: string) => open.get(id)?.();
  return { first, sent, finish };
}

const paths = async () =>
  Object.fromEntries(
    (await deps.metrics.firstAttempts.get()).values.map((v) => [v.labels.path, v.value]),
  );

it('gives a refused first attempt the next slot its own process frees on the lane, unparked', async () => {
  deps.metrics.firstAttempts.reset();
  const { first, sent, finish } = firstAttempts();
  await first.start([claimedOf('dlv_waits_1', 'sub_waits')], Date.now());
  expect(sent).toEqual(['dlv_waits_1']);
  // The lane's one slot is this process's: the next first attempt waits for it.
  await first.start([claimedOf('dlv_waits_2', 'sub_waits')], Date.now());
  expect(sent).toEqual(['dlv_waits_1']);
  finish('dlv_waits_1');
  await waitFor('the waiting attempt sent', () => sent.length === 2);
  expect(sent).toEqual(['dlv_waits_1', 'dlv_waits_2']);
  expect(await paths()).toEqual({ inline: 2 });
  finish('dlv_waits_2');
  await first.close();
});

it('parks a refused first attempt at once when its process holds none of the lane', async () => {
  deps.metrics.firstAttempts.reset();
  const other = firstAttempts();
  const mine = firstAttempts();
  // Another process holds the lane's one slot: nothing of this one will free it.
  await other.first.start([claimedOf('dlv_waits_3', 'sub_waits_other')], Date.now());
  await mine.first.start([claimedOf('dlv_waits_4', 'sub_waits_other')], Date.now());
  expect(mine.sent).toEqual([]);
  expect(await paths()).toEqual({ inline: 1, parked: 1 });
  other.finish('dlv_waits_3');
  await other.first.close();
  await mine.first.close();
});
