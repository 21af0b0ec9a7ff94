import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import type { FannedOutDelivery } from '@switchboard/db';
import { catalog, type EventJob } from '@switchboard/queues';
import { contextFromTraceparent, inSpan } from '@switchboard/telemetry';
import type { WorkerDeps } from '../deps';
import { PARKED_DELAY_MS, type Attempt } from './deliver';
import type { DeliveryBatches } from './delivery-batches';
import { deliveryJob, enqueueDeliveries } from './enqueue-deliveries';
import type { InFlightLanes, Lane, Verdict } from './in-flight';
import type { InlineAttempts } from './inline-attempts';

/**
 * The event's job: the first attempt of each of its deliveries, with no second job in
 * between. The relay created the deliveries when it published the event (./relay.ts),
 * pre-claimed for this job's first run; the fan-out statement (batched with those of
 * concurrent event jobs) returns the event's open deliveries, and fans the event out itself
 * only if the relay's commit was lost (it then creates a delivery per matching active
 * subscription and one for the legacy webhook_url, pre-claimed for this run, and marks the
 * event). Then each new delivery, once it has a unit of the process's budget for inline
 * attempts (./inline-attempts.ts: waited for until the job's deadline) and a free slot in
 * its lanes, is attempted by this process at once, its pre-claim taken as its claim (no
 * update of the row before its outcome: docs/DECISIONS.md, Row work per delivery); one whose
 * lane is full is added parked (`addParked`); every other open delivery (no budget by the
 * deadline, or a re-run finding a delivery past its first attempt) gets a delivery job, to
 * which its pre-claim is handed on (the job's claim renews it: one update, as any claim). The deadline is INLINE_WAIT_MS after the job starts, and the
 * job waits for the attempts it started until then at most: long enough for a healthy
 * receiver, so event jobs are paced by their receivers and a busy subscription does not
 * fill its lane and fall back to delivery jobs (whose lane slots would then leave the next
 * events' first attempts none); no longer, because a receiver that never answers must not
 * hold event job slots that every other subscription's events need.
 *
 * Crash safety: the rows are committed before anything is sent. A worker that dies before
 * the job ends leaves it active: BullMQ runs it again. The re-run holds no pre-claim the
 * relay made (the first run may still be attempting, if it was only stalled): it leaves those
 * deliveries alone, and they come back when their pre-claims lapse, as a dead worker's claims
 * do (the reconciler's lapse check); it attempts the other open deliveries. One that dies
 * during an inline attempt leaves a pre-claimed or claimed row whose lock lapses: the
 * reconciler redoes the attempt, same event id.
 */
/**
 * How long an event job waits for its inline attempts before it lets them run on alone: a
 * healthy receiver answers well within it (attempts take a few ms, tens at p99, in
 * docs/BENCHMARKS.md).
 */
export const INLINE_WAIT_MS = 250;

/** A new delivery whose lane was full when its event fanned out. */
interface Refused {
  d: FannedOutDelivery;
  lane: Lane;
  verdict: Exclude<Verdict, 'ok'>;
}

export function fanOutProcessor(
  deps: WorkerDeps,
  batches: DeliveryBatches,
  lanes: InFlightLanes,
  attempt: Attempt,
  inline: InlineAttempts,
) {
  // An event relayed under a trace fans out in a span of it; its inline attempts are children.
  return (data: EventJob, job: Job): Promise<void> =>
    data.traceparent
      ? inSpan(
          'events.fan_out',
          {
            parent: contextFromTraceparent(data.traceparent),
            attributes: { 'switchboard.event_id': data.eventId },
          },
          () => fanOut(data, job),
        )
      : fanOut(data, job);

  async function fanOut(data: EventJob, job: Job): Promise<void> {
    const deadline = Date.now() + INLINE_WAIT_MS;
    const open = carriedDeliveries(data) ?? (await batches.fanOut(data.eventId));
    // The pre-claims this run holds: those its own fan-out made, and on the job's first run
    // those the relay made for it. Only one run is ever first (BullMQ counts every start,
    // stall and failure), so only one process attempts a pre-claimed delivery as it is.
    const first = job.attemptsMade === 0 && job.stalledCounter === 0 && job.attemptsStarted <= 1;
    const mine = (d: FannedOutDelivery): boolean =>
      d.preclaimed && (d.made || (first && data.preclaimed === true));
    const later: FannedOutDelivery[] = [];
    const full: Refused[] = [];
    const started: Array<Promise<void>> = [];
    await Promise.all(
      open.map(async (d) => {
        // Another run's pre-claim: that run attempts it, or it lapses to the reconciler.
        if (d.preclaimed && !mine(d)) return;
        const targetId = d.subscriptionId ?? d.receptionistId;
        const fresh = d.round === 1 && d.attempts === 0 && d.claims === 0;
        if (!fresh || !targetId) return void later.push(d);
        const lane = { tenantId: d.tenantId, targetId };
        if (!(await inline.takeBy(d.tenantId, deadline))) {
          // No budget in time: a delivery job, or one added parked if its lane is full now.
          const verdict = await lanes.peek(lane).catch(() => 'ok' as const);
          return void (verdict === 'ok' ? later.push(d) : full.push({ d, lane, verdict }));
        }
        const holder = `inline:${d.id}#${randomUUID()}`;
        const verdict = await lanes.acquire(lane, holder).catch((err: unknown) => {
          deps.logger.warn({ err, deliveryId: d.id }, 'lane slot unavailable; queued instead');
          return 'error' as const;
        });
        if (verdict === 'ok') return void started.push(attemptInline(d, lane, holder, mine(d)));
        inline.untake(d.tenantId);
        if (verdict === 'error') later.push(d);
        else full.push({ d, lane, verdict });
      }),
    );
    const { firstAttempts } = deps.metrics;
    if (started.length) firstAttempts.inc({ path: 'inline' }, started.length);
    if (later.length) firstAttempts.inc({ path: 'job' }, later.length);
    if (full.length) firstAttempts.inc({ path: 'parked' }, full.length);
    // Pre-claims this run holds are handed on to the jobs (each job's claim renews its
    // delivery's). A failure here fails the job: its run again holds no pre-claim, so what
    // this run did not hand on lapses to the reconciler; the attempts started go on.
    const handedOn = (d: FannedOutDelivery) => ({ ...d, preclaimed: mine(d) });
    await enqueueDeliveries(deps, later.map(handedOn));
    await addParked(full.map((r) => ({ ...r, d: handedOn(r.d) })));
    await settledWithin(started, deadline - Date.now());
  }

  /**
   * One first attempt in this process, holding a unit of the inline budget and its lane
   * slots, started at once (the event job waits for it until its deadline at most).
   */
  function attemptInline(
    d: FannedOutDelivery,
    lane: Lane,
    holder: string,
    preclaimed: boolean,
  ): Promise<void> {
    return inline.start(lane.tenantId, async () => {
      try {
        const end = await lanes.hold(
          lane,
          holder,
          () =>
            attempt({
              deliveryId: d.id,
              round: d.round,
              attempt: 1,
              ...(preclaimed ? { preclaim: 'take' as const } : {}),
            }),
          (err) => deps.logger.warn({ err, deliveryId: d.id }, 'slot not renewed'),
        );
        // Throttled: a job waits for the slot the attempt was given (the row was given back:
        // no pre-claim to hand on).
        if (end) {
          const next = { ...d, preclaimed: false, nextAttemptAt: new Date(end.throttledUntil) };
          await enqueueDeliveries(deps, [next]);
        }
      } catch (err) {
        // The claim lapses and the reconciler redoes the attempt (same event id).
        deps.logger.warn({ err, deliveryId: d.id }, 'inline delivery attempt failed');
      } finally {
        await release(lane, holder);
      }
    });
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
      PARKED_DELAY_MS,
    );
    await Promise.all(
      refused.map((r) => lanes.park(r.lane, r.verdict, catalog.deliveries.jobId(deliveryJob(r.d)))),
    );
    for (const r of refused) deps.metrics.deliveryWaits.inc({ lane: r.verdict });
  }

  async function release(lane: Lane, holder: string): Promise<void> {
    // Not fatal: the slot expires by itself, and parked jobs are woken periodically.
    await lanes.release(lane, holder).catch((err: unknown) => {
      deps.logger.warn({ err }, 'could not release a lane slot');
    });
  }
}

/**
 * The deliveries the relay put in the job (./relay.ts), as the fan-out statement would have
 * returned them when the relay made them: new, due now, pre-claimed for this job if the job
 * says so. A job run again (its worker died) finds some of them past that; it holds none of
 * their pre-claims, so it attempts none of them, and whatever the first run left unfinished
 * is the reconciler's, as for any delivery of a dead worker. Undefined: the job carries none
 * (a reconciler's job, or too many deliveries), and runs the statement.
 */
function carriedDeliveries(data: EventJob): FannedOutDelivery[] | undefined {
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
    preclaimed: data.preclaimed === true,
    made: false,
  }));
}

/** Resolves when every promise settled, or after `ms`, whichever comes first. */
async function settledWithin(promises: Array<Promise<void>>, ms: number): Promise<void> {
  if (promises.length === 0 || ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([Promise.allSettled(promises), deadline]);
  clearTimeout(timer);
}
