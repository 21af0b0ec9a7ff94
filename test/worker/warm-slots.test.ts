import { catalog } from '@switchboard/queues';
import { InFlightLanes, type Lane } from '../../apps/worker/src/webhook-delivery/in-flight';
import { WarmSlots } from '../../apps/worker/src/webhook-delivery/warm-slots';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/wait';

// A first attempt's lane slot is handed to the next first attempt of the same lane in the
// process, without going back to Redis; it stays counted in Redis meanwhile (the cap holds),
// and goes back to its lane when nobody takes it, once it is old enough, or on close. Real
// Redis, the test's own key prefix.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const lanesFor = (perTarget: number) =>
  new InFlightLanes(
    ctx.deps.redis,
    ctx.config.queuePrefix,
    ctx.queues.deliveries,
    catalog.deliveries.name,
    { perTarget, perTenant: 100, slotTtlMs: 60_000 },
  );
const held = (lane: Lane) =>
  ctx.redis.zrange(`${ctx.config.queuePrefix}:lanes:held:s:${lane.targetId}`, 0, -1);
const fail = (err: unknown) => {
  throw err;
};

it('hands a slot to the next first attempt of its lane, never to two at once, counted in Redis', async () => {
  const lanes = lanesFor(1);
  const acquires = jest.spyOn(lanes, 'acquire');
  const warm = new WarmSlots(lanes, fail, 60_000, 60_000);
  const lane = { tenantId: 'ten_warm', targetId: 'sub_warm_1' };
  const first = await warm.acquire(lane, 'h1');
  if (first.verdict !== 'ok') throw new Error('no slot');
  // The lane holds one: a second attempt is refused while the first runs.
  expect((await warm.acquire(lane, 'h2')).verdict).toBe('target');
  await warm.release(lane, first.slot);
  // Handed on: the same slot, still the lane's one, not asked of Redis again.
  const next = await warm.acquire(lane, 'h3');
  expect(next).toEqual({ verdict: 'ok', slot: first.slot });
  expect(await held(lane)).toEqual(['h1']);
  expect(acquires).toHaveBeenCalledTimes(2);
  // Another lane gets nothing of it.
  const other = { tenantId: 'ten_warm', targetId: 'sub_warm_2' };
  const elsewhere = await warm.acquire(other, 'h4');
  expect(elsewhere.verdict === 'ok' && elsewhere.slot.holder).toBe('h4');
  expect(acquires).toHaveBeenCalledTimes(3);
  if (next.verdict === 'ok') await warm.release(lane, next.slot);
  if (elsewhere.verdict === 'ok') await warm.release(other, elsewhere.slot);
  // Close gives every warm slot back.
  await warm.close();
  expect(await held(lane)).toEqual([]);
  expect(await held(other)).toEqual([]);
});

it('gives a slot back when no first attempt of its lane takes it in time', async () => {
  const lanes = lanesFor(1);
  const warm = new WarmSlots(lanes, fail, 20, 60_000);
  const lane = { tenantId: 'ten_warm', targetId: 'sub_warm_idle' };
  const got = await warm.acquire(lane, 'idle-1');
  if (got.verdict !== 'ok') throw new Error('no slot');
  await warm.release(lane, got.slot);
  await waitFor('the idle slot back in its lane', async () => (await held(lane)).length === 0);
  // Asked of Redis again, under the new holder.
  const again = await warm.acquire(lane, 'idle-2');
  expect(again.verdict === 'ok' && again.slot.holder).toBe('idle-2');
  await warm.close();
});

it('gives a slot back, not on, once it has served its time', async () => {
  const lanes = lanesFor(1);
  const warm = new WarmSlots(lanes, fail, 60_000, 0);
  const lane = { tenantId: 'ten_warm', targetId: 'sub_warm_old' };
  const got = await warm.acquire(lane, 'old-1');
  if (got.verdict !== 'ok') throw new Error('no slot');
  await warm.release(lane, got.slot);
  expect(await held(lane)).toEqual([]);
  const again = await warm.acquire(lane, 'old-2');
  expect(again.verdict === 'ok' && again.slot.holder).toBe('old-2');
  await warm.close();
});
