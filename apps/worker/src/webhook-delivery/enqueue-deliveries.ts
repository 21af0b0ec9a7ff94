import type { Job } from 'bullmq';
import { enqueue, type DeliveryJob } from '@switchboard/queues';
import type { OpenDelivery } from '@switchboard/db';
import type { WorkerDeps } from '../deps';

export interface EnqueueOptions {
  /** A delay for every job instead of each delivery's due time (jobs added parked). */
  delayMs?: number;
  /**
   * The jobs recover attempts a dead worker may have had in flight (DeliveryJob `recovered`).
   * Only jobs this call creates are marked: one that still exists under the same id is left
   * as it is (its worker lives, or BullMQ's stalled check will run it again).
   */
  recovered?: boolean;
}

/**
 * Adds the job for each delivery's next attempt, delayed until it is due. The id is
 * deterministic for a claim generation (re-adding is harmless); the job names the delivery's
 * lanes (in-flight caps).
 */
export async function enqueueDeliveries(
  deps: WorkerDeps,
  deliveries: readonly OpenDelivery[],
  opts: EnqueueOptions = {},
): Promise<void> {
  if (deliveries.length === 0) return;
  const { delayMs, recovered = false } = opts;
  await enqueue(
    deps.queues,
    'deliveries',
    deliveries.map((d) => ({
      data: deliveryJob(d, recovered),
      opts: {
        delay: delayMs ?? Math.max(0, d.nextAttemptAt ? d.nextAttemptAt.getTime() - Date.now() : 0),
        // An attempt that may have been in flight when its worker died goes to the head of
        // the queue, as it goes before parked jobs for a lane slot (in-flight.ts, `urgent`).
        ...(d.claims > 0 || recovered ? { lifo: true } : {}),
      },
    })),
  );
}

/** The job of a delivery's next attempt (its id follows from it: catalog.deliveries.jobId). */
export function deliveryJob(d: OpenDelivery, recovered = false): DeliveryJob {
  const targetId = d.subscriptionId ?? d.receptionistId;
  return {
    v: 1 as const,
    deliveryId: d.id,
    round: d.round,
    attempt: d.attempts + 1,
    ...(d.claims > 0 ? { claims: d.claims } : {}),
    ...(recovered ? { recovered: true as const } : {}),
    ...(targetId ? { tenantId: d.tenantId, targetId } : {}),
  };
}

/**
 * Whether a delivery job recovers an attempt a dead worker may have had in flight: made for
 * a lapsed claim or as `recovered`, or run again by BullMQ after its worker died (stalled).
 * Such a job goes before its lanes' backlogs and claims its row: every recovery of an
 * attempt is counted (deliver.ts, MAX_CLAIMS_PER_ATTEMPT), so one that kills its worker
 * each time is given up, not sent for ever.
 */
export const isRecovery = (data: DeliveryJob, job: Pick<Job, 'stalledCounter'>): boolean =>
  (data.claims ?? 0) > 0 || data.recovered === true || job.stalledCounter > 0;
