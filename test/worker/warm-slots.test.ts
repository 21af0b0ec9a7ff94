import { catalog } from '@switchboard/queues';
import { InFlightLanes, type Lane } from '../../apps/worker/src/webhook-delivery/in-flight';
import { WarmSlots, type HeldSlot } from '../../apps/worker/src/webhook-delivery/warm-slots';
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
const named = (holder: string) => () => holder;

/** The slot `warm` gives `lane` (the holder a new one gets: `holder`), which must be one. */
async function slotOf(warm: WarmSlots, lane: Lane, holder: string): Promise<HeldSlot> {
  const got = await warm.acquire(lane, named(holder));
  if (got.verdict !== 'ok') throw new Error(`no slot for ${holder}: ${got.verdict} full`);
  return got.slot;
}

it('hands a slot to the next first attempt of its lane, never to two at once, counted in Redis', async () => {
  const lanes = lanesFor(1);
  const acquires = jest.spyOn(lanes, 'acquire');
  const warm = new WarmSlots(lanes, fail, 60_000, 60_000);
  const lane = { tenantId: 'ten_warm', targetId: 'sub_warm_1' };
  const first = await slotOf(warm, lane, 'h1');
  // The lane holds one: a second attempt is refused while the first runs.
  expect((await warm.acquire(lane, named('h2'))).verdict).toBe('target');
  await warm.release(lane, first);
  // Handed on: the same slot, still the lane's one, not asked of Redis again.
  const next = await slotOf(warm, lane, 'h3');
  expect(next).toEqual(first);
  expect(await held(lane)).toEqual(['h1']);
  expect(acquires).toHaveBeenCalledTimes(2);
  // Another lane gets nothing of it.
  const other = { tenantId: 'ten_warm', targetId: 'sub_warm_2' };
  const elsewhere = await slotOf(warm, other, 'h4');
  expect(elsewhere.holder).toBe('h4');
  expect(acquires).toHaveBeenCalledTimes(3);
  await warm.release(lane, next);
  await warm.release(other, elsewhere);
  // Close gives every warm slot back.
  await warm.close();
  expect(await held(lane)).toEqual([]);
  expect(await held(other)).toEqual([]);
});

it('gives a slot back when no first attempt of its lane takes it in time', async () => {
  const warm = new WarmSlots(lanesFor(1), fail, 20, 60_000);
  const lane = { tenantId: 'ten_warm', targetId: 'sub_warm_idle' };
  await warm.release(lane, await slotOf(warm, lane, 'idle-1'));
  await waitFor('the idle slot back in its lane', async () => (await held(lane)).length === 0);
  // Asked of Redis again, under the new holder.
  expect((await slotOf(warm, lane, 'idle-2')).holder).toBe('idle-2');
  await warm.close();
});

it('gives a slot back, not on, once it has served its time', async () => {
  const warm = new WarmSlots(lanesFor(1), fail, 60_000, 0);
  const lane = { tenantId: 'ten_warm', targetId: 'sub_warm_old' };
  await warm.release(lane, await slotOf(warm, lane, 'old-1'));
  expect(await held(lane)).toEqual([]);
  expect((await slotOf(warm, lane, 'old-2')).holder).toBe('old-2');
  await warm.close();
});

it('asks Redis for a slot of a lane only once its own give-back of that lane has gone through', async () => {
  const lanes = lanesFor(1);
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  // The give-back held on its way to Redis (a release batch in flight before it).
  const slowRelease: Pick<InFlightLanes, 'acquire' | 'release'> = {
    acquire: (lane, holder) => lanes.acquire(lane, holder),
    release: async (lane, holder) => {
      await gate;
      return lanes.release(lane, holder);
    },
  };
  const warm = new WarmSlots(slowRelease, fail, 60_000, 0);
  const lane = { tenantId: 'ten_warm', targetId: 'sub_warm_back' };
  // Served its time (max age 0): given back, not on.
  const giving = warm.release(lane, await slotOf(warm, lane, 'back-1'));
  const next = warm.acquire(lane, named('back-2'));
  // The old slot still counts in Redis: asked now, the lane would be full for `next`.
  expect(await held(lane)).toEqual(['back-1']);
  open();
  await giving;
  expect((await next).verdict).toBe('ok');
  expect(await held(lane)).toEqual(['back-2']);
  await warm.close();
});

it('hands the next slot its attempts free to a first attempt its full lane refused', async () => {
  const warm = new WarmSlots(lanesFor(1), fail, 60_000, 60_000);
  const lane = { tenantId: 'ten_warm', targetId: 'sub_warm_wait' };
  const first = await slotOf(warm, lane, 'wait-1');
  expect((await warm.acquire(lane, named('wait-2'))).verdict).toBe('target');
  expect(warm.holds(lane)).toBe(true);
  const waiting = warm.waitFor(lane, 60_000);
  await warm.release(lane, first);
  // The same slot, never given back in between: still the lane's one in Redis.
  expect(await waiting).toEqual(first);
  expect(await held(lane)).toEqual(['wait-1']);
  await warm.release(lane, first);
  await warm.close();
  expect(await held(lane)).toEqual([]);
});

it('lets a waiting first attempt go on without a slot once its process holds none of the lane', async () => {
  const warm = new WarmSlots(lanesFor(1), fail, 60_000, 0);
  const lane = { tenantId: 'ten_warm', targetId: 'sub_warm_none' };
  // Holding nothing of the lane: nothing to wait for.
  expect(await warm.waitFor(lane, 60_000)).toBeUndefined();
  const only = await slotOf(warm, lane, 'none-1');
  const waiting = warm.waitFor(lane, 60_000);
  // Served its time (max age 0): given back, so the waiter has nothing coming.
  await warm.release(lane, only);
  expect(await waiting).toBeUndefined();
  expect(warm.holds(lane)).toBe(false);
  await warm.close();
});

it("counts this process's slots a new attempt could soon have: warm, or held by an attempt not yet slow", async () => {
  const warm = new WarmSlots(lanesFor(3), fail, 60_000);
  const lane = { tenantId: 'ten_mine', targetId: 'sub_mine' };
  const before = Date.now() - 1;
  const a = await slotOf(warm, lane, 'mine-a');
  await slotOf(warm, lane, 'mine-b');
  expect(warm.mine('ten_mine', 'sub_mine', before)).toEqual({ held: 2, waiting: 0 });
  // Attempts that began at or before `since` are slow: their slots are not soon free.
  expect(warm.mine('ten_mine', 'sub_mine', Date.now() + 1)).toEqual({ held: 0, waiting: 0 });
  await warm.release(lane, a); // warm now: counted however late
  expect(warm.mine('ten_mine', 'sub_mine', Date.now() + 1)).toEqual({ held: 1, waiting: 0 });
  expect(warm.mine('ten_mine', 'sub_other', before)).toEqual({ held: 0, waiting: 0 });
  await warm.close();
});
