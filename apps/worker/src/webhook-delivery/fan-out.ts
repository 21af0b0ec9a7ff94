import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { isNew, TAKE_WINDOW_S, type OpenDelivery } from '@switchboard/db';
import { catalog, type EventJob } from '@switchboard/queues';
import { contextFromTraceparent, inSpan } from '@switchboard/telemetry';
import type { WorkerDeps } from '../deps';
import { PARKED_DELAY_MS, type Attempt } from './deliver';
import type { DeliveryBatches } from './delivery-batches';
import { deliveryJob, enqueueDeliveries } from './enqueue-deliveries';
import type { InFlightLanes, Lane, Verdict } from './in-flight';
import type { InlineAttempts } from './inline-attempts';
import { FirstAttemptLease, LEASE_WAIT_MS, lockOf } from './first-attempt-lease';
import type { HeldSlot, WarmSlots } from './warm-slots';

/**
 * The event's job: the first attempt of each of its deliveries, with no second job in
 * between. The relay created the deliveries when it published the event (./relay.ts); the
 * fan-out statement (batched with those of concurrent event jobs) returns the event's open
 * deliveries, and fans the event out itself only if the relay's commit was lost (it then
 * creates a delivery per matching active subscription and one for the legacy webhook_url,
 * and marks the event). Then each new delivery whose lanes have a free slot, while the
 * process has budget for inline attempts (./inline-attempts.ts), is attempted by this
 * process at once; one whose lane is full is added parked (`addParked`); every other open
 * delivery (budget spent, or past its first attempt) gets a delivery job. All are added
 * before any inline attempt starts. The job waits for the attempts it started for at most
 * LEASE_WAIT_MS (./first-attempt-lease.ts): long enough for a healthy receiver, so event jobs are paced by their receivers and a busy
 * subscription does not fill its lane and fall back to delivery jobs; no longer, because a
 * receiver that never answers must not hold event job slots that every other subscription's
 * events need.
 *
 * Crash safety: the rows are committed before anything is sent. The attempts the job makes
 * are taken, not claimed (./first-attempt-lease.ts): the job's BullMQ lock holds them. A
 * worker that dies before the job ends leaves it active: BullMQ runs it again after its
 * stalled check, and that run hands every delivery still open to a recovered delivery job
 * (`handOn`), which claims it and makes the attempt again, same event id. An attempt still running when
 * the job stops waiting is claimed first; a worker that dies after leaves that claim to
 * lapse: the reconciler redoes the attempt.
 */
/** A new delivery whose lane was full when its event fanned out. */
interface Refused {
  d: OpenDelivery;
  lane: Lane;
  verdict: Exclude<Verdict, 'ok'>;
}

export function fanOutProcessor(
  deps: WorkerDeps,
  batches: DeliveryBatches,
  lanes: InFlightLanes,
  attempt: Attempt,
  inline: InlineAttempts,
  warm: WarmSlots,
  leaseWaitMs = LEASE_WAIT_MS,
  lockDurationMs?: number,
) {
  // An event relayed under a trace fans out in a span of it; its inline attempts are children.
  return (data: EventJob, job?: JobRuns, token?: string): Promise<void> => {
    const rerun = job ? isRerun(job) : false;
    const lock = lockOf(job, token, lockDurationMs);
    return data.traceparent
      ? inSpan(
          'events.fan_out',
          {
            parent: contextFromTraceparent(data.traceparent),
            attributes: { 'switchboard.event_id': data.eventId },
          },
          () => fanOut(data, rerun, lock),
        )
      : fanOut(data, rerun, lock);
  };

  async function fanOut(
    data: EventJob,
    rerun: boolean,
    lock: (() => Promise<boolean>) | undefined,
  ): Promise<void> {
    if (rerun) return handOn(data);
    const open = carriedDeliveries(data) ?? (await batches.fanOut(data.eventId));
    const later: OpenDelivery[] = [];
    const full: Refused[] = [];
    const now: Array<{ d: OpenDelivery; lane: Lane; slot: HeldSlot }> = [];
    await Promise.all(
      open.map(async (d) => {
        const targetId = d.subscriptionId ?? d.receptionistId;
        if (!isNew(d) || !targetId) return void later.push(d);
        const lane = { tenantId: d.tenantId, targetId };
        // Taken before the first await: the budget is never overshot.
        if (!inline.take(d.tenantId)) {
          // No budget: a delivery job, or one added parked if its lane is full now.
          const verdict = await lanes.peek(lane).catch(() => 'ok' as const);
          return void (verdict === 'ok' ? later.push(d) : full.push({ d, lane, verdict }));
        }
        // A slot handed on by the previous first attempt of the lane, or a new one.
        const got = await warm
          .acquire(lane, () => `inline:${d.id}#${randomUUID()}`)
          .catch((err: unknown) => {
            deps.logger.warn({ err, deliveryId: d.id }, 'lane slot unavailable; queued instead');
            return { verdict: 'error' as const };
          });
        if (got.verdict === 'ok') return void now.push({ d, lane, slot: got.slot });
        inline.untake(d.tenantId);
        if (got.verdict === 'error') later.push(d);
        else full.push({ d, lane, verdict: got.verdict });
      }),
    );
    try {
      await enqueueDeliveries(deps, later);
      await addParked(full);
    } catch (err) {
      // The slots taken go back; the job fails and runs again (nothing was sent).
      await Promise.all(now.map((n) => warm.release(n.lane, n.slot)));
      for (const n of now) inline.untake(n.lane.tenantId);
      throw err;
    }
    // The job's lock holds the attempts it makes: they are taken, not claimed, until it ends.
    const lease = new FirstAttemptLease(TAKE_WINDOW_S, leaseWaitMs, lock);
    const { firstAttempts } = deps.metrics;
    if (now.length) firstAttempts.inc({ path: 'inline' }, now.length);
    if (later.length) firstAttempts.inc({ path: 'job' }, later.length);
    if (full.length) firstAttempts.inc({ path: 'parked' }, full.length);
    const started = now.map(({ d, lane, slot }) =>
      inline.start(lane.tenantId, async () => {
        try {
          const end = await lanes.hold(
            lane,
            slot.holder,
            () => attempt({ deliveryId: d.id, round: d.round, attempt: 1 }, lease),
            (err) => deps.logger.warn({ err, deliveryId: d.id }, 'slot not renewed'),
          );
          // Throttled: a job waits for the slot the attempt was given.
          if (end)
            await enqueueDeliveries(deps, [{ ...d, nextAttemptAt: new Date(end.throttledUntil) }]);
        } catch (err) {
          // The claim lapses and the reconciler redoes the attempt (same event id).
          deps.logger.warn({ err, deliveryId: d.id }, 'inline delivery attempt failed');
        } finally {
          // Handed on to the next first attempt of the lane, or given back (./warm-slots.ts).
          await warm.release(lane, slot);
        }
      }),
    );
    // Those still running after LEASE_WAIT_MS are claimed (or recorded first): the job may
    // then end.
    await lease.endWithin(started);
  }

  /**
   * A run after the job's first (its worker died, or the run failed) attempts nothing itself:
   * every delivery of the event still open, read back by the fan-out statement, gets a
   * delivery job marked recovered. One the first run took and may have had in flight gets a
   * new job, which goes before its lanes' backlogs and claims its row (./deliver.ts); one the
   * first run handed to a delivery job keeps that job (same id, the add is a no-op), which
   * may be taking it right now in a live worker: attempting it here would send it twice.
   */
  async function handOn(data: EventJob): Promise<void> {
    const open = await batches.fanOut(data.eventId);
    await enqueueDeliveries(deps, open, { recovered: true });
  }

  /**
   * Deliveries whose lane is full are added parked: delayed and listed under that lane, as a
   * delivery job refused a slot would be (./deliver.ts), without first waiting in the queue
   * and taking a worker slot only to be refused. A slot freed meanwhile wakes them at once.
   */
  async function addParked(refused: readonly Refused[]): Promise<void> {
    if (refused.length === 0) return;
    await enqueueDeliveries(
      deps,
      refused.map((r) => r.d),
      { delayMs: PARKED_DELAY_MS },
    );
    await Promise.all(
      refused.map((r) => lanes.park(r.lane, r.verdict, catalog.deliveries.jobId(deliveryJob(r.d)))),
    );
    for (const r of refused) deps.metrics.deliveryWaits.inc({ lane: r.verdict });
  }
}

/**
 * The deliveries the relay put in the job (./relay.ts), as the fan-out statement would have
 * returned them when the relay made them: new, due now (a first run only: a re-run reads
 * them back, `handOn`). Undefined: the job carries none (a reconciler's job, or too many
 * deliveries), and runs the statement.
 */
function carriedDeliveries(data: EventJob): OpenDelivery[] | undefined {
  const { tenantId } = data;
  if (!data.deliveries || !tenantId) return undefined;
  const due = new Date();
  return data.deliveries.map((d) => ({
    id: d.id,
    tenantId,
    eventId: data.eventId,
    subscriptionId: d.subscriptionId ?? null,
    receptionistId: d.receptionistId ?? null,
    round: 1,
    attempts: 0,
    claims: 0,
    nextAttemptAt: due,
  }));
}

/** What BullMQ says of a job's runs (its `Job`), and how to renew its lock. */
type JobRuns = Pick<Job, 'attemptsStarted' | 'stalledCounter' | 'attemptsMade' | 'extendLock'>;

/**
 * An event job run again: its first run stalled (its worker died) or failed. (BullMQ counts a
 * move to delayed as a start too; an event job is never delayed, so each start is a run.)
 */
const isRerun = (job: JobRuns): boolean =>
  job.attemptsStarted > 1 || job.stalledCounter > 0 || job.attemptsMade > 0;
