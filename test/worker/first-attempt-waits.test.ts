import type { ClaimedDelivery } from '@switchboard/db';
import { catalog } from '@switchboard/queues';
import type { Attempt } from '../../apps/worker/src/webhook-delivery/deliver';
import { createDeliveryBatches } from '../../apps/worker/src/webhook-delivery/delivery-batches';
import { FirstAttempts } from '../../apps/worker/src/webhook-delivery/first-attempts';
import { InFlightLanes } from '../../apps/worker/src/webhook-delivery/in-flight';
import { quietWorkerFile } from '../support/worker-deps';
import { waitFor } from '../support/wait';

// A first attempt refused by its full lane, while its own process holds some of that lane's
// slots, waits (claimed, its unit held) for the next slot one of them frees instead of being
// given back and parked: two workers on one busy subscription no longer park a quarter of
// their first attempts (docs/decisions/0131-a-refused-first-attempt-waits-for-its-process.md).
// Real Redis and Postgres, the test's own prefix and database; the attempts are the test's
// (each says when its POST is over).
const w = quietWorkerFile();

const claimedOf = (id: string, targetId: string) =>
  ({
    delivery: { id, tenantId: 'ten_waits', subscriptionId: targetId, receptionistId: null },
  }) as unknown as ClaimedDelivery;

/**
 * A process's first attempts on lanes capped at `perTarget`, each POST open until
 * `finish(id)`; after `finishAll()` every POST open or to come ends at once.
 */
function firstAttempts(perTarget = 1, budget = 4) {
  const lanes = new InFlightLanes(
    w.deps.redis,
    w.ctx.config.queuePrefix,
    w.deps.queues.deliveries,
    catalog.deliveries.name,
    { perTarget, perTenant: 100, slotTtlMs: 60_000 },
  );
  const open = new Map<string, () => void>();
  const sent: string[] = [];
  let ending = false;
  const attempt: Attempt = (request, claim) =>
    new Promise((resolve) => {
      sent.push(request.deliveryId);
      const end = () => {
        claim?.onSent?.();
        resolve(undefined);
      };
      if (ending) end();
      else open.set(request.deliveryId, end);
    });
  const batches = createDeliveryBatches(w.deps.knex, 60_000, w.deps.stores.deliveryLifecycle);
  const first = new FirstAttempts(w.deps, batches, lanes, attempt, budget);
  const finish = (id: string) => open.get(id)?.();
  const finishAll = () => {
    ending = true;
    for (const end of open.values()) end();
  };
  return { first, sent, finish, finishAll };
}

const paths = async () =>
  Object.fromEntries(
    (await w.deps.metrics.firstAttempts.get()).values.map((v) => [v.labels.path, v.value]),
  );

it('gives a refused first attempt the next slot its own process frees on the lane, unparked', async () => {
  w.deps.metrics.firstAttempts.reset();
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
  w.deps.metrics.firstAttempts.reset();
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

// Two relays each claimed a tenant's events as far as their own budget allowed: what one
// claimed beyond a lane the other's attempts held full was parked, and every slot given back
// went to a parked job (docs/decisions/0133-the-relay-claims-what-full-lanes-have-room-for.md).
it("claims for a tenant refused by a full lane no more than the lane's room across processes", async () => {
  const tenantRoom = async (p: ReturnType<typeof firstAttempts>) =>
    (await p.first.rooms()).rooms.get('ten_waits');
  // Lanes of two slots; a budget of 8, so a share of 4 a tenant.
  const other = firstAttempts(2, 8);
  const mine = firstAttempts(2, 8);
  try {
    await other.first.start(
      [claimedOf('dlv_bound_1', 'sub_bound'), claimedOf('dlv_bound_2', 'sub_bound')],
      Date.now(),
    );
    expect(other.sent).toEqual(['dlv_bound_1', 'dlv_bound_2']);
    expect(await tenantRoom(mine)).toBeUndefined(); // not bounded: its share, 4
    await mine.first.start([claimedOf('dlv_bound_3', 'sub_bound')], Date.now());
    expect(mine.sent).toEqual([]); // parked
    // The lane has no room (two held, one parked): one delivery, which would find out.
    expect(await tenantRoom(mine)).toBe(1);
    // The process holding the lane: refused attempts wait for its slots as they free, and
    // the tenant is claimed no further than those slots less the attempts waiting.
    await other.first.start([claimedOf('dlv_bound_4', 'sub_bound')], Date.now());
    expect(await tenantRoom(other)).toBe(1);
    await other.first.start([claimedOf('dlv_bound_6', 'sub_bound')], Date.now());
    expect(await tenantRoom(other)).toBe(0);
    other.finish('dlv_bound_1');
    await waitFor('a waiting attempt sent', () => other.sent.length === 3);
    expect(await tenantRoom(other)).toBe(1);
    // Another subscription of the tenant serves it: its events are not held behind the full
    // lane (the tenant holds one unit here: its share less one).
    await mine.first.start([claimedOf('dlv_bound_5', 'sub_bound_free')], Date.now());
    expect(mine.sent).toEqual(['dlv_bound_5']);
    expect(await tenantRoom(mine)).toBe(3);
  } finally {
    other.finishAll();
    mine.finishAll();
    await other.first.close();
    await mine.first.close();
  }
});
