import { Batcher, type BatcherOptions } from './batcher';

const opts = (over: Partial<BatcherOptions> = {}): BatcherOptions => ({
  maxItems: 100,
  maxWaitMs: 5,
  maxRunning: 1,
  retries: 2,
  retryable: (err) => (err as { code?: string }).code === '40P01',
  shared: (err) => (err as { code?: string }).code === '08006',
  ...over,
});

it('joins calls made in the same turn into one batch, each getting its own result', async () => {
  const batches: number[][] = [];
  const b = new Batcher<number, number>(async (xs) => {
    batches.push(xs);
    return xs.map((x) => x * 2);
  }, opts());
  expect(await Promise.all([1, 2, 3].map((x) => b.add(x)))).toEqual([2, 4, 6]);
  expect(batches).toEqual([[1, 2, 3]]);
});

it('queues calls while a batch runs and sends them together when it ends', async () => {
  const batches: number[][] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const b = new Batcher<number, number>(
    async (xs) => {
      batches.push(xs);
      if (batches.length === 1) await gate;
      return xs;
    },
    opts({ maxWaitMs: 60_000 }),
  );
  const first = b.add(1);
  await new Promise((r) => setImmediate(r));
  const later = [b.add(2), b.add(3)];
  release();
  expect(await Promise.all([first, ...later])).toEqual([1, 2, 3]);
  expect(batches).toEqual([[1], [2, 3]]);
});

it('runs a batch at once when it reaches maxItems', async () => {
  const batches: number[][] = [];
  const b = new Batcher<number, number>(
    async (xs) => (batches.push(xs), xs),
    opts({ maxItems: 2 }),
  );
  await Promise.all([b.add(1), b.add(2), b.add(3)]);
  expect(batches).toEqual([[1, 2], [3]]);
});

it('retries a deadlocked batch, and runs a batch with one bad item item by item', async () => {
  let deadlocks = 1;
  const b = new Batcher<number, number>(async (xs) => {
    if (deadlocks-- > 0) throw Object.assign(new Error('deadlock'), { code: '40P01' });
    if (xs.includes(13)) throw new Error('bad row');
    return xs;
  }, opts());
  const results = await Promise.allSettled([1, 13, 2].map((x) => b.add(x)));
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
});

it('fails every caller of a batch that met an outage, without splitting it', async () => {
  let calls = 0;
  const b = new Batcher<number, number>(async () => {
    calls++;
    throw Object.assign(new Error('connection lost'), { code: '08006' });
  }, opts());
  const results = await Promise.allSettled([1, 2, 3].map((x) => b.add(x)));
  expect(results.every((r) => r.status === 'rejected')).toBe(true);
  expect(calls).toBe(1);
});

it('with a gap, starts the next batch no sooner than that after the last one ended', async () => {
  const batches: Array<{ items: number[]; at: number }> = [];
  const b = new Batcher<number, number>(
    async (xs) => (batches.push({ items: xs, at: Date.now() }), xs),
    opts({ gapMs: 50 }),
  );
  await b.add(1);
  await new Promise((r) => setImmediate(r)); // the batch's end is noted after its results
  const ended = Date.now();
  // Calls made one turn apart, inside the gap: one batch, once the gap has passed.
  const later = [b.add(2)];
  await new Promise((r) => setImmediate(r));
  later.push(b.add(3));
  expect(await Promise.all(later)).toEqual([2, 3]);
  expect(batches.map((x) => x.items)).toEqual([[1], [2, 3]]);
  expect(batches[1]!.at - ended).toBeGreaterThanOrEqual(45);
});
