import type { Job } from 'bullmq';
import type { DeliveryJob } from '@switchboard/queues';
import type { WorkerDeps } from '../deps';
import { deliveryProcessor, type Attempt } from './deliver';
import type { InFlightLanes } from './in-flight';

// Which hold a delivery job's attempt gets: a first attempt is taken under the job's own
// lease, of any age; a job that may follow an attempt already sent (a lapsed claim, a
// recovered or stalled job, a run after a failed one) claims, so that its recoveries are
// counted. The lanes always grant a slot here; the attempt only reports its lease.
const lanes = {
  acquire: () => Promise.resolve('ok'),
  hold: <T>(_lane: unknown, _holder: string, work: () => Promise<T>) => work(),
  release: () => Promise.resolve(),
} as unknown as InFlightLanes;
const deps = {} as WorkerDeps;

/** Runs the delivery job of `data`, as BullMQ's `job`, with `attempt`. */
const runJob = (
  attempt: Attempt,
  data: Partial<DeliveryJob> = {},
  job: { stalledCounter?: number; attemptsMade?: number } = {},
): Promise<void> =>
  deliveryProcessor(
    deps,
    lanes,
    attempt,
  )({ v: 1, deliveryId: 'dlv_1', round: 1, attempt: 1, tenantId: 't', targetId: 's', ...data }, {
    id: 'dlv_1-r1-a1',
    stalledCounter: 0,
    attemptsMade: 0,
    ...job,
  } as unknown as Job);

/** The lease window the attempt of `data` run by `job` got: null (any age), or none. */
async function leaseOf(
  data: Partial<DeliveryJob>,
  job: { stalledCounter?: number; attemptsMade?: number } = {},
): Promise<number | null | 'claimed'> {
  let seen: number | null | 'claimed' = 'claimed';
  const attempt: Attempt = (_request, lease) => {
    seen = lease ? lease.windowS : 'claimed';
    return Promise.resolve(undefined);
  };
  await runJob(attempt, data, job);
  return seen;
}

describe('deliveryProcessor', () => {
  it("takes a new delivery's first attempt under the job's lease, at any age", async () => {
    expect(await leaseOf({})).toBeNull();
  });

  it('claims every attempt that may follow one already sent', async () => {
    expect(await leaseOf({ claims: 1 })).toBe('claimed');
    expect(await leaseOf({ recovered: true })).toBe('claimed');
    expect(await leaseOf({}, { stalledCounter: 1 })).toBe('claimed');
    expect(await leaseOf({}, { attemptsMade: 1 })).toBe('claimed');
  });

  it('claims a taken attempt still running after LEASE_WAIT_MS, then waits for its end', async () => {
    let claimedNow!: () => void;
    const claimed = new Promise<void>((resolve) => (claimedNow = resolve));
    let finish!: () => void;
    const attempt: Attempt = async (_request, lease) => {
      const hold = lease?.hold(() => Promise.resolve(claimedNow()));
      await new Promise<void>((resolve) => (finish = resolve));
      hold?.close();
      return undefined;
    };
    let ended = false;
    const job = runJob(attempt).then(() => (ended = true));
    await claimed;
    expect(ended).toBe(false);
    finish();
    await job;
    expect(ended).toBe(true);
  });

  it('claims retries and later rounds', async () => {
    expect(await leaseOf({ attempt: 2 })).toBe('claimed');
    expect(await leaseOf({ round: 2 })).toBe('claimed');
  });
});
