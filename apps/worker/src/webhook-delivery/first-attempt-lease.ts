import type { Job } from 'bullmq';
import { TAKE_WINDOW_S, type ClaimedDelivery, type ClaimRequest } from '@switchboard/db';
import type { DeliveryBatches } from './delivery-batches';

/**
 * How long a job waits for the first attempts it took before it claims those still running
 * and, for an event job, lets them run on alone: a healthy receiver answers well within it
 * (attempts take a few ms, tens at p99, in docs/benchmarks/delivery.md).
 */
export const LEASE_WAIT_MS = 250;

/**
 * The lease a job holds on the first attempts it makes itself. Such an attempt is taken
 * (read: DeliveryLifecycle.take), not claimed: while the job runs, its BullMQ lock is the
 * attempt's claim. When the job stops waiting for its attempts (`endWithin`: LEASE_WAIT_MS),
 * `end` claims each one still before its record, like any attempt, so a death after that
 * is covered by the claim's lapse. A worker that dies before leaves the job active: BullMQ
 * runs it again after its stalled check, as a recovery, which claims (./fan-out.ts,
 * ./deliver.ts).
 *
 * Invariant: the job completes only once each attempt it took is recorded or claimed (or
 * failed: its row, due and unclaimed, is the reconciler's). The delivery row is then written
 * once for a first attempt that ends within LEASE_WAIT_MS: its outcome.
 *
 * An event job's lease (`windowS` TAKE_WINDOW_S) takes only deliveries made within that
 * window: the reconciler leaves such a row alone for twice that, and the event job holds no
 * job id of the delivery's. A delivery job's lease (`windowS` null) takes its delivery at
 * any age: the job's id (one per attempt) makes the reconciler's re-add a no-op while the job
 * lives, and its lock keeps the reconciler from freeing it.
 */
export class FirstAttemptLease {
  /**
   * `waitMs`: how long `endWithin` waits (LEASE_WAIT_MS; tests lengthen it, see index.ts).
   * `lock`: renews the job's BullMQ lock and says whether the job still holds it (a job
   * without one, a unit test's, holds its attempts by its lease alone).
   */
  constructor(
    readonly windowS: number | null = TAKE_WINDOW_S,
    private readonly waitMs: number = LEASE_WAIT_MS,
    private readonly lock?: () => Promise<boolean>,
  ) {}
  private renewing: Promise<boolean> | undefined;

  /**
   * Whether the job still holds its lock, renewed for a whole lock duration from now: a taken
   * attempt is sent only after this said yes (AttemptHold.confirm). A job whose lock lapsed (its
   * worker stalled past the lock, and BullMQ's stalled check ran it again elsewhere, where
   * it claims) must not send what it took: the other run sends it. Concurrent asks share
   * one renewal; an error (Redis away) is a no.
   */
  holdsLock(): Promise<boolean> {
    if (!this.lock) return Promise.resolve(true);
    this.renewing ??= this.lock()
      .catch(() => false)
      .finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private open = true;
  /** Per attempt held: what `end` waits for (its record, once started) or runs (its claim). */
  private readonly holds = new Set<{ claim: () => Promise<unknown>; work?: Promise<unknown> }>();

  /** False once the job stopped waiting: an attempt is then claimed before it is made. */
  get held(): boolean {
    return this.open;
  }

  /** Holds an attempt; `claim` runs if the job ends before the attempt's record starts. */
  hold(claim: () => Promise<unknown>): {
    recording(work: Promise<unknown>): void;
    close(): void;
  } {
    const h: { claim: () => Promise<unknown>; work?: Promise<unknown> } = { claim };
    this.holds.add(h);
    return {
      recording: (work) => void (h.work = work),
      close: () => void this.holds.delete(h),
    };
  }

  /** Ends the lease: claims the attempts not yet recording, and waits for every one. */
  async end(): Promise<void> {
    this.open = false;
    const waits = [...this.holds].map((h) => h.work ?? h.claim());
    await Promise.allSettled(waits);
  }

  /** Ends the lease once every attempt of `started` settled, or after its wait (LEASE_WAIT_MS). */
  async endWithin(started: ReadonlyArray<Promise<unknown>>): Promise<void> {
    if (started.length) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.waitMs);
      });
      await Promise.race([Promise.allSettled(started), deadline]);
      clearTimeout(timer);
    }
    await this.end();
  }
}

/**
 * One attempt's hold on its delivery: claimed (by a delivery job, or a first attempt whose
 * job's lease had ended), or taken under a lease. `claim` makes a taken attempt claimed
 * (false: another holds the row now, and the attempt must not go on); `confirm`, asked
 * right before sending, says whether the hold is still this attempt's (a taken one: its
 * job's lock renewed, or its late claim won); `record` writes the outcome, as a taken or a
 * claimed attempt, whichever it is by then; `close` ends the hold.
 */
export interface AttemptHold {
  claimed: ClaimedDelivery;
  claim(): Promise<boolean>;
  confirm(): Promise<boolean>;
  record<T>(write: (taken: boolean) => Promise<T>): Promise<T>;
  close(): void;
}

/**
 * The hold of attempt `request`: taken under `lease` where the delivery is new and recent,
 * else claimed (undefined: gone, final, past this attempt, or held by another worker).
 */
export async function holdAttempt(
  batches: DeliveryBatches,
  request: ClaimRequest,
  lease: FirstAttemptLease | undefined,
): Promise<AttemptHold | undefined> {
  const taken = lease?.held ? await batches.take(request, lease.windowS) : undefined;
  if (!taken || !lease) {
    const claimed = await batches.claim(request);
    return claimed && claimedHold(claimed);
  }
  // Claimed once at most: by the lease's end, or before a step other than sending.
  let late: Promise<boolean> | undefined;
  const claim = (): Promise<boolean> =>
    (late ??= batches.claim(request).then((c) => c !== undefined));
  const hold = lease.hold(claim);
  // The job stopped waiting while the take ran: claimed before anything is sent.
  if (!lease.held && !(await claim())) {
    hold.close();
    return undefined;
  }
  return {
    claimed: taken,
    claim,
    // Once the lease ended, the late claim decides; before, the job's lock.
    confirm: () => late ?? lease.holdsLock(),
    record: <T>(write: (taken: boolean) => Promise<T>): Promise<T> => {
      // Decided now, synchronously: either the lease already ran `claim` (its result says
      // which record this is), or it will wait for this record instead.
      const claiming = late;
      const work = (async () => write(!(claiming ? await claiming : false)))();
      hold.recording(work);
      return work;
    },
    close: () => hold.close(),
  };
}

const claimedHold = (claimed: ClaimedDelivery): AttemptHold => ({
  claimed,
  claim: () => Promise.resolve(true),
  confirm: () => Promise.resolve(true),
  record: (write) => write(false),
  close: () => undefined,
});

/**
 * The renewal of a running job's BullMQ lock for `durationMs` (the queue's lock duration):
 * true while this run still holds it. Undefined without a job, a token or a duration.
 */
export function lockOf(
  job: Pick<Job, 'extendLock'> | undefined,
  token: string | undefined,
  durationMs: number | undefined,
): (() => Promise<boolean>) | undefined {
  if (!job || !token || !durationMs) return undefined;
  return async () => (await job.extendLock(token, durationMs)) === 1;
}
