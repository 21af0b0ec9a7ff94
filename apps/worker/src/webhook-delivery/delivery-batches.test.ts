import type { AttemptRecord, DeliveryLifecycle, Knex } from '@switchboard/db';
import { BATCH_MAX_WAIT_MS, createDeliveryBatches, RECORD_GAP_MS } from './delivery-batches';

// Records go to Postgres one batch at a time: outcomes that come while a record statement
// runs wait for it and go together in the next (decision 0128), once the first of them has
// waited BATCH_MAX_WAIT_MS; one that finds none running waits until RECORD_GAP_MS after the
// last ended (decision 0141). The lifecycle here only counts its calls; the statements
// themselves are tested against Postgres in test/worker/delivery-lifecycle.test.ts.
const record = (id: string): AttemptRecord => ({
  delivery: { id, round: 1, attempts: 0, subscriptionId: 'sub_1' },
  statusCode: 200,
  error: null,
  durationMs: 1,
  excerpt: null,
  outcome: { kind: 'succeeded' },
  logAttempt: true,
});

/** A lifecycle whose record statements run until the test releases them, in order. */
function heldRecords() {
  const calls: string[][] = [];
  const release: Array<() => void> = [];
  const lifecycle = {
    record: (_db: Knex, records: AttemptRecord[]) => {
      calls.push(records.map((r) => r.delivery.id));
      return new Promise<boolean[]>((resolve) =>
        release.push(() => resolve(records.map(() => true))),
      );
    },
  } as unknown as DeliveryLifecycle;
  return { calls, release, batches: createDeliveryBatches({} as Knex, 1_000, lifecycle) };
}

/** The end of this event-loop turn: batches due now have started. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

// The batches' timers are the test's: nothing runs BATCH_MAX_WAIT_MS out unless it says so.
beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
afterEach(() => jest.useRealTimers());

it('sends the outcomes that come while a record statement runs together, when the first has waited', async () => {
  const { calls, release, batches } = heldRecords();
  const first = batches.record(record('dlv_1'));
  await turn();
  expect(calls).toEqual([['dlv_1']]);
  const later = [batches.record(record('dlv_2')), batches.record(record('dlv_3'))];
  await turn();
  expect(calls).toHaveLength(1);
  release.shift()?.();
  expect(await first).toBe(true);
  await turn();
  // They go once the first has waited BATCH_MAX_WAIT_MS, with any outcome that comes meanwhile.
  later.push(batches.record(record('dlv_4')));
  jest.advanceTimersByTime(BATCH_MAX_WAIT_MS - 1);
  await turn();
  expect(calls).toHaveLength(1);
  jest.advanceTimersByTime(1);
  await turn();
  expect(calls).toEqual([['dlv_1'], ['dlv_2', 'dlv_3', 'dlv_4']]);
  release.shift()?.();
  expect(await Promise.all(later)).toEqual([true, true, true]);
});

it('waits for a running record statement at most BATCH_MAX_WAIT_MS', async () => {
  const { calls, release, batches } = heldRecords();
  const all = [batches.record(record('dlv_a'))];
  await turn();
  all.push(batches.record(record('dlv_b')));
  jest.advanceTimersByTime(BATCH_MAX_WAIT_MS - 1);
  await turn();
  expect(calls).toEqual([['dlv_a']]);
  jest.advanceTimersByTime(1);
  await turn();
  expect(calls).toEqual([['dlv_a'], ['dlv_b']]);
  for (const r of release) r();
  expect(await Promise.all(all)).toEqual([true, true]);
});

it('holds an outcome that finds no record running until RECORD_GAP_MS after the last ended', async () => {
  const { calls, release, batches } = heldRecords();
  const first = batches.record(record('dlv_x'));
  await turn();
  release.shift()?.();
  expect(await first).toBe(true);
  await turn();
  const next = batches.record(record('dlv_y'));
  jest.advanceTimersByTime(RECORD_GAP_MS - 1);
  await turn();
  expect(calls).toEqual([['dlv_x']]);
  jest.advanceTimersByTime(1);
  await turn();
  expect(calls).toEqual([['dlv_x'], ['dlv_y']]);
  release.shift()?.();
  expect(await next).toBe(true);
});
