import { catalog, enqueue } from '@switchboard/queues';
import { InFlightLanes } from '../../apps/worker/src/webhook-delivery/in-flight';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/wait';

// The in-flight caps are exact (docs/webhooks.md, "Inside", step 3): a slot lapses by itself only
// when its holder died, never while its attempt still runs, however slow that attempt is. Real
// Redis; the TTL is scaled down to 1.5 s. A holder renews every third of it, so its slot
// lapses only if its process stalls for two thirds of a TTL: with 300 ms, a busy machine's
// stall of 200 ms failed the first test (seen beside a benchmark).
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const TTL_MS = 1_500;
const lanesFor = (c: TestContext) =>
  new InFlightLanes(
    c.deps.redis,
    c.config.queuePrefix,
    c.queues.deliveries,
    catalog.deliveries.name,
    {
      perTarget: 1,
      perTenant: 10,
      slotTtlMs: TTL_MS,
    },
  );
/** Redis's clock, the one slot expiries are kept in. */
const redisNow = async () => {
  const [s, us] = await ctx.redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
};
const pastTtls = async (n: number) => {
  const from = await redisNow();
  await waitFor(`${n} slot TTLs passed`, async () => (await redisNow()) > from + n * TTL_MS);
};

it('a slot held by a running attempt never lapses; a released one is free at once', async () => {
  const lanes = lanesFor(ctx);
  const lane = { tenantId: 'ten_slots', targetId: 'sub_slots' };
  expect(await lanes.acquire(lane, 'a')).toBe('ok');
  let finish = (): void => undefined;
  const running = lanes.hold(lane, 'a', () => new Promise<void>((r) => (finish = r)));
  let second: string;
  try {
    await pastTtls(2);
    second = await lanes.acquire(lane, 'b');
  } finally {
    finish();
    await running;
  }
  // Without renewal the slot would have lapsed twice over: 'ok', one over the cap.
  expect(second).toBe('target');
  await lanes.release(lane, 'a');
  expect(await lanes.acquire(lane, 'b')).toBe('ok');
});

it('the slot of a holder that died (no renewal) frees itself after its TTL', async () => {
  const lanes = lanesFor(ctx);
  const lane = { tenantId: 'ten_dead', targetId: 'sub_dead' };
  expect(await lanes.acquire(lane, 'dead')).toBe('ok');
  expect(await lanes.acquire(lane, 'next')).toBe('target');
  await pastTtls(1);
  expect(await lanes.acquire(lane, 'next')).toBe('ok');
});

it('a recovered attempt (urgent) gets the next freed slot, before parked jobs and inline attempts', async () => {
  const lanes = lanesFor(ctx);
  const lane = { tenantId: 'ten_urgent', targetId: 'sub_urgent' };
  expect(await lanes.acquire(lane, 'live')).toBe('ok');
  // A backlog job parks first; then the job of an attempt whose worker died.
  expect(await lanes.acquire(lane, 'p#1', 'parked-job')).toBe('target');
  await lanes.park(lane, 'target', 'parked-job');
  expect(await lanes.acquire(lane, 'u#1', 'urgent-job')).toBe('target');
  await lanes.park(lane, 'target', 'urgent-job', true);
  await lanes.release(lane, 'live');
  // The freed slot is kept for the urgent job: neither an inline attempt nor the job parked
  // before it can take it.
  expect(await lanes.acquire(lane, 'inline')).toBe('target');
  expect(await lanes.acquire(lane, 'p#2', 'parked-job')).toBe('target');
  expect(await lanes.acquire(lane, 'u#2', 'urgent-job')).toBe('ok');
  // Its release wakes the parked one as before.
  await lanes.release(lane, 'u#2');
  expect(await lanes.acquire(lane, 'p#3', 'parked-job')).toBe('ok');
});

it('an urgent job parked twice is listed once: its second turn does not keep a slot for nobody', async () => {
  const lanes = lanesFor(ctx);
  const lane = { tenantId: 'ten_twice', targetId: 'sub_twice' };
  expect(await lanes.acquire(lane, 'live')).toBe('ok');
  // Listed while it waits for a slot, then again when it gives up waiting (deliver.ts).
  expect(await lanes.acquire(lane, 'u#1', 'urgent-twice')).toBe('target');
  await lanes.park(lane, 'target', 'urgent-twice', true);
  await lanes.park(lane, 'target', 'urgent-twice', true);
  expect(await lanes.acquire(lane, 'p#1', 'parked-after')).toBe('target');
  await lanes.park(lane, 'target', 'parked-after');
  await lanes.release(lane, 'live');
  expect(await lanes.acquire(lane, 'u#2', 'urgent-twice')).toBe('ok');
  // Its release wakes the parked job, whose slot is free: no second reservation for it.
  await lanes.release(lane, 'u#2');
  expect(await lanes.acquire(lane, 'p#2', 'parked-after')).toBe('ok');
});

it('an urgent job that parks with a slot still kept for it is woken at once', async () => {
  const lanes = lanesFor(ctx);
  const lane = { tenantId: 'ten_kept', targetId: 'sub_kept' };
  const data = { v: 1 as const, deliveryId: 'dlv_kept', round: 1, attempt: 1 };
  const jobId = catalog.deliveries.jobId(data);
  expect(await lanes.acquire(lane, 'live')).toBe('ok');
  await lanes.park(lane, 'target', jobId, true);
  // The slot freed is kept for the job while it is not delayed (it gave up waiting).
  await lanes.release(lane, 'live');
  await enqueue(ctx.queues, 'deliveries', [{ data, opts: { delay: 60_000 } }]);
  await lanes.park(lane, 'target', jobId, true);
  expect(await ctx.queues.deliveries.getJobState(jobId)).not.toBe('delayed');
  await ctx.queues.deliveries.remove(jobId);
});
