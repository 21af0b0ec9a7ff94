import type { ClaimedDelivery, ClaimRequest } from '@switchboard/db';
import type { DeliveryBatches } from './delivery-batches';

/**
 * The lease an event job holds on the first attempts it makes itself. Such an attempt is
 * taken (read: DeliveryLifecycle.take), not claimed: while the job runs, its BullMQ lock is
 * the attempt's claim. A worker that dies mid-attempt leaves the job active; BullMQ runs it
 * again after its stalled check, and that run attempts what the first left unrecorded. When
 * the job stops waiting for its attempts (INLINE_WAIT_MS, ./fan-out.ts), `end` claims each
 * one still before its record, like any attempt, so a death after the job ended is covered
 * by the claim's lapse.
 *
 * Invariant: the job completes only once each attempt it took is recorded or claimed (or
 * failed: its row, due and unclaimed, is the reconciler's once TAKE_WINDOW_S has passed
 * twice). The delivery row is then written once for a first attempt: its outcome.
 */
export class FirstAttemptLease {
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
}

/**
 * One attempt's hold on its delivery: claimed (by a delivery job, or a first attempt whose
 * job's lease had ended), or taken under a lease. `claim` makes a taken attempt claimed
 * (false: another holds the row now, and the attempt must not go on); `record` writes the
 * outcome, as a taken or a claimed attempt, whichever it is by then; `close` ends the hold.
 */
export interface AttemptHold {
  claimed: ClaimedDelivery;
  claim(): Promise<boolean>;
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
  const taken = lease?.held ? await batches.take(request) : undefined;
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
  record: (write) => write(false),
  close: () => undefined,
});
