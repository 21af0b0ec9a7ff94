import { enqueue, type DeliveryJob } from '@switchboard/queues';
import type { OpenDelivery } from '@switchboard/db';
import type { WorkerDeps } from '../deps';

/**
 * Adds the job for each delivery's next attempt, delayed until it is due. The id is
 * deterministic for a claim generation (re-adding is harmless); the job names the delivery's
 * lanes (in-flight caps).
 */
export async function enqueueDeliveries(
  deps: WorkerDeps,
  deliveries: readonly OpenDelivery[],
  /** A delay for every job instead of each delivery's due time (jobs added parked). */
  delayMs?: number,
): Promise<void> {
  if (deliveries.length === 0) return;
  await enqueue(
    deps.queues,
    'deliveries',
    deliveries.map((d) => ({
      data: deliveryJob(d),
      opts: {
        delay: delayMs ?? Math.max(0, d.nextAttemptAt ? d.nextAttemptAt.getTime() - Date.now() : 0),
        // An attempt whose claim lapsed (in flight when its worker died) goes to the head of
        // the queue, as it goes before parked jobs for a lane slot (in-flight.ts, `urgent`).
        ...(d.claims > 0 ? { lifo: true } : {}),
      },
    })),
  );
}

/** The job of a delivery's next attempt (its id follows from it: catalog.deliveries.jobId). */
export function deliveryJob(d: OpenDelivery): DeliveryJob {
  const targetId = d.subscriptionId ?? d.receptionistId;
  return {
    v: 1 as const,
    deliveryId: d.id,
    round: d.round,
    attempt: d.attempts + 1,
    ...(d.claims > 0 ? { claims: d.claims } : {}),
    ...(targetId ? { tenantId: d.tenantId, targetId } : {}),
  };
}
