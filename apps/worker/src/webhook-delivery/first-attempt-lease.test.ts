import type { ClaimedDelivery, ClaimRequest } from '@switchboard/db';
import type { DeliveryBatches } from './delivery-batches';
import { FirstAttemptLease, holdAttempt } from './first-attempt-lease';

// The hold's bookkeeping alone; the statements are tested against Postgres
// (test/worker/delivery-lifecycle.test.ts, test/worker/first-attempt-lease.test.ts).
const request: ClaimRequest = { deliveryId: 'dlv_1', round: 1, attempt: 1 };
const row = { delivery: { id: 'dlv_1' } } as unknown as ClaimedDelivery;

/** Batches whose take and claim answer as told, counting the claims asked. */
function batches(opts: { take?: boolean; claim?: boolean } = {}) {
  const calls = { take: 0, claim: 0 };
  const b = {
    take: () => (calls.take++, Promise.resolve(opts.take === false ? undefined : row)),
    claim: () => (calls.claim++, Promise.resolve(opts.claim === false ? undefined : row)),
  } as unknown as DeliveryBatches;
  return { b, calls };
}

it('without a lease, claims', async () => {
  const { b, calls } = batches();
  const hold = await holdAttempt(b, request, undefined);
  expect(calls).toEqual({ take: 0, claim: 1 });
  expect(await hold?.record(async (taken) => taken)).toBe(false);
});

it('under a held lease, takes; a record started before the lease ends is a taken one, and the end waits for it', async () => {
  const { b, calls } = batches();
  const lease = new FirstAttemptLease();
  const hold = await holdAttempt(b, request, lease);
  let finish: (v: string) => void = () => undefined;
  const recorded = hold?.record(
    (taken) => new Promise<string>((resolve) => (finish = (v) => resolve(`${v}:${taken}`))),
  );
  let ended = false;
  const end = lease.end().then(() => (ended = true));
  await Promise.resolve();
  expect(ended).toBe(false);
  finish('done');
  await end;
  expect(await recorded).toBe('done:true');
  expect(calls).toEqual({ take: 1, claim: 0 });
});

it('an attempt still before its record when the lease ends is claimed then, once', async () => {
  const { b, calls } = batches();
  const lease = new FirstAttemptLease();
  const hold = await holdAttempt(b, request, lease);
  await lease.end();
  expect(calls.claim).toBe(1);
  expect(await hold?.claim()).toBe(true);
  expect(await hold?.record(async (taken) => taken)).toBe(false);
  expect(calls.claim).toBe(1);
});

it('a late claim refused leaves a taken record (moved only if the row is still unclaimed)', async () => {
  const { b } = batches({ claim: false });
  const lease = new FirstAttemptLease();
  const hold = await holdAttempt(b, request, lease);
  await lease.end();
  expect(await hold?.claim()).toBe(false);
  expect(await hold?.record(async (taken) => taken)).toBe(true);
});

it('a delivery the take refuses is claimed instead; after the lease ended, nothing is taken', async () => {
  const refused = batches({ take: false });
  await holdAttempt(refused.b, request, new FirstAttemptLease());
  expect(refused.calls).toEqual({ take: 1, claim: 1 });
  const ended = new FirstAttemptLease();
  await ended.end();
  const late = batches();
  expect(await holdAttempt(late.b, request, ended)).toBeDefined();
  expect(late.calls).toEqual({ take: 0, claim: 1 });
});

it('a closed hold is not claimed by the end', async () => {
  const { b, calls } = batches();
  const lease = new FirstAttemptLease();
  const hold = await holdAttempt(b, request, lease);
  hold?.close();
  await lease.end();
  expect(calls.claim).toBe(0);
});

it('a taken attempt is confirmed by its job lock; concurrent asks share one renewal', async () => {
  const { b } = batches();
  let renewals = 0;
  let held = true;
  const lease = new FirstAttemptLease(null, 250, () => (renewals++, Promise.resolve(held)));
  const one = await holdAttempt(b, request, lease);
  const two = await holdAttempt(b, request, lease);
  expect(await Promise.all([one?.confirm(), two?.confirm()])).toEqual([true, true]);
  expect(renewals).toBe(1);
  held = false;
  expect(await one?.confirm()).toBe(false);
  const failing = new FirstAttemptLease(null, 250, () => Promise.reject(new Error('redis away')));
  expect(await (await holdAttempt(b, request, failing))?.confirm()).toBe(false);
});

it('once the lease ended, a taken attempt is confirmed by its late claim alone', async () => {
  const refused = batches({ claim: false });
  const lease = new FirstAttemptLease(null, 250, () => Promise.resolve(true));
  const hold = await holdAttempt(refused.b, request, lease);
  await lease.end();
  expect(await hold?.confirm()).toBe(false);
  expect(await (await holdAttempt(batches().b, request, undefined))?.confirm()).toBe(true);
});
