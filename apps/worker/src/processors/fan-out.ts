import { randomUUID } from 'node:crypto';
import type { OpenDelivery } from '@switchboard/db';
import type { EventJob } from '@switchboard/queues';
import type { WorkerDeps } from '../deps';
import type { Attempt } from './deliver';
import type { DeliveryBatches } from './delivery-batches';
import { enqueueDeliveries } from './enqueue-deliveries';
import type { InFlightLanes, Lane } from './in-flight';
import type { InlineAttempts } from './inline-attempts';

/**
 * The event's job: fan-out and the first attempt of each of its deliveries, with no second
 * job in between. One statement (batched with the fan-outs of concurrent event jobs) creates
 * a delivery per matching active subscription and one for the legacy webhook_url, and marks
 * the event fanned out. Then each new delivery whose lanes have a free slot, while the
 * process has budget for inline attempts (./inline-attempts.ts), is attempted by this
 * process at once; every other open delivery (lane full, budget spent, or a re-run finding a
 * delivery past its first attempt) gets a delivery job, added before any inline attempt
 * starts. The job does not wait for the attempts it started: a receiver that never answers
 * must not hold an event job slot, or every other subscription's events would wait for it.
 *
 * Crash safety: the rows are committed before anything is sent. A worker that dies before
 * the job ends leaves it active: BullMQ runs it again (the fan-out creates nothing new and
 * returns the deliveries still open). One that dies during an inline attempt leaves an open
 * row whose claim (if taken) lapses: the reconciler redoes the attempt, same event id.
 */
export function fanOutProcessor(
  deps: WorkerDeps,
  batches: DeliveryBatches,
  lanes: InFlightLanes,
  attempt: Attempt,
  inline: InlineAttempts,
) {
  return async (data: EventJob): Promise<void> => {
    const open = await batches.fanOut(data.eventId);
    const later: OpenDelivery[] = [];
    const now: Array<{ d: OpenDelivery; lane: Lane; holder: string }> = [];
    await Promise.all(
      open.map(async (d) => {
        const targetId = d.subscriptionId ?? d.receptionistId;
        const fresh = d.round === 1 && d.attempts === 0 && d.claims === 0;
        // Taken before the first await: the budget is never overshot.
        if (!fresh || !targetId || !inline.take()) return void later.push(d);
        const lane = { tenantId: d.tenantId, targetId };
        const holder = `inline:${d.id}#${randomUUID()}`;
        const verdict = await lanes.acquire(lane, holder).catch((err: unknown) => {
          deps.logger.warn({ err, deliveryId: d.id }, 'lane slot unavailable; queued instead');
          return 'error' as const;
        });
        if (verdict === 'ok') return void now.push({ d, lane, holder });
        inline.untake();
        later.push(d);
      }),
    );
    try {
      await enqueueDeliveries(deps, later);
    } catch (err) {
      // The slots taken go back; the job fails and runs again (nothing was sent).
      await Promise.all(now.map((n) => release(n.lane, n.holder)));
      for (let i = 0; i < now.length; i++) inline.untake();
      throw err;
    }
    for (const { d, lane, holder } of now) {
      inline.start(async () => {
        try {
          await attempt({ deliveryId: d.id, round: d.round, attempt: 1 });
        } catch (err) {
          // The claim lapses and the reconciler redoes the attempt (same event id).
          deps.logger.warn({ err, deliveryId: d.id }, 'inline delivery attempt failed');
        } finally {
          await release(lane, holder);
        }
      });
    }
  };

  async function release(lane: Lane, holder: string): Promise<void> {
    // Not fatal: the slot expires by itself, and parked jobs are woken periodically.
    await lanes.release(lane, holder).catch((err: unknown) => {
      deps.logger.warn({ err }, 'could not release a lane slot');
    });
  }
}
