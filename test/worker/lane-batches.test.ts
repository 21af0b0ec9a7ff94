import { catalog } from '@switchboard/queues';
import { InFlightLanes, type Lane } from '../../apps/worker/src/webhook-delivery/in-flight';
import { createTestContext, type TestContext } from '../support/context';

// Concurrent acquires (and releases) of one process go to Redis as ONE script call, which
// must decide them exactly as consecutive single calls would: the caps stay exact, a release
// still wakes the parked jobs of every lane it frees, and a slot reserved for a recovered
// attempt goes to that job only. Real Redis, the test's own key prefix.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const lanesFor = (perTarget: number, perTenant: number) =>
  new InFlightLanes(
    ctx.deps.redis,
    ctx.config.queuePrefix,
    ctx.queues.deliveries,
    catalog.deliveries.name,
    { perTarget, perTenant, slotTtlMs: 60_000 },
  );

/** Counts the script calls `lanes` makes for `script`. */
const callsOf = (lanes: InFlightLanes, script: 'acquireScript' | 'releaseScript') =>
  jest.spyOn(lanes as unknown as Record<typeof script, () => Promise<unknown>>, script);

it('a batch of acquires over a cap grants exactly the free slots, in order, and refuses the rest', async () => {
  const lanes = lanesFor(2, 3);
  const a = { tenantId: 'ten_batch', targetId: 'sub_batch_a' };
  const b = { tenantId: 'ten_batch', targetId: 'sub_batch_b' };
  const calls = callsOf(lanes, 'acquireScript');
  const asked: Array<[Lane, string]> = [
    [a, 'a1'],
    [a, 'a2'],
    [a, 'a3'],
    [b, 'b1'],
    [b, 'b2'],
    [a, 'a4'],
  ];
  const verdicts = await Promise.all(asked.map(([lane, holder]) => lanes.acquire(lane, holder)));
  expect(calls).toHaveBeenCalledTimes(1);
  // Target a has 2 slots: a1, a2; a3 and a4 find it full. The tenant has 3: a1, a2, b1; b2
  // finds the tenant full (its target has room).
  expect(verdicts).toEqual(['ok', 'ok', 'target', 'ok', 'tenant', 'target']);
  const held = await ctx.redis.zrange(`${ctx.config.queuePrefix}:lanes:held:t:ten_batch`, 0, -1);
  expect(held.sort()).toEqual(['a1', 'a2', 'b1']);
});

it('a batch of releases wakes the parked jobs of the lanes of every holder', async () => {
  const lanes = lanesFor(1, 1);
  const one = { tenantId: 'ten_rel_1', targetId: 'sub_rel_1' };
  const two = { tenantId: 'ten_rel_2', targetId: 'sub_rel_2' };
  expect(await lanes.acquire(one, 'h1')).toBe('ok');
  expect(await lanes.acquire(two, 'h2')).toBe('ok');
  // A job refused by target 1, and one refused by tenant 2 (its own target is free): both
  // delayed and parked, as deliver.ts leaves them.
  const queue = ctx.queues.deliveries;
  const parked = { target: 'rel-job-target', tenant: 'rel-job-tenant' };
  for (const id of Object.values(parked)) {
    await queue.add(catalog.deliveries.name, {} as never, { jobId: id, delay: 3_600_000 });
  }
  expect(await lanes.acquire(one, 'x1', parked.target)).toBe('target');
  await lanes.park(one, 'target', parked.target);
  const other = { tenantId: two.tenantId, targetId: 'sub_rel_other' };
  expect(await lanes.acquire(other, 'x2', parked.tenant)).toBe('tenant');
  await lanes.park(other, 'tenant', parked.tenant);
  expect(await queue.getJobState(parked.target)).toBe('delayed');
  expect(await queue.getJobState(parked.tenant)).toBe('delayed');

  const calls = callsOf(lanes, 'releaseScript');
  await Promise.all([lanes.release(one, 'h1'), lanes.release(two, 'h2')]);
  expect(calls).toHaveBeenCalledTimes(1);
  // A release resolves once the jobs it woke are promoted.
  expect(await queue.getJobState(parked.target)).toBe('waiting');
  expect(await queue.getJobState(parked.tenant)).toBe('waiting');
  expect(await ctx.redis.smembers(`${ctx.config.queuePrefix}:lanes:waiting`)).toEqual([]);
});

it('in a batch, a slot reserved for a recovered attempt goes to its job only', async () => {
  const lanes = lanesFor(1, 10);
  const lane = { tenantId: 'ten_res', targetId: 'sub_res' };
  expect(await lanes.acquire(lane, 'live')).toBe('ok');
  expect(await lanes.acquire(lane, 'u#1', 'urgent-job')).toBe('target');
  await lanes.park(lane, 'target', 'urgent-job', true);
  await lanes.release(lane, 'live'); // the freed slot is now reserved for urgent-job
  const calls = callsOf(lanes, 'acquireScript');
  const verdicts = await Promise.all([
    lanes.acquire(lane, 'inline'),
    lanes.acquire(lane, 'p#1', 'parked-job'),
    lanes.acquire(lane, 'u#2', 'urgent-job'),
    lanes.acquire(lane, 'inline-after'),
  ]);
  expect(calls).toHaveBeenCalledTimes(1);
  expect(verdicts).toEqual(['target', 'target', 'ok', 'target']);
});
