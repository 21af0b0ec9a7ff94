import type { Job } from 'bullmq';
import { jobIds, parseEventJob, type DeliveryJob, type EventJob } from '@switchboard/queues';
import { fanOutEvent, type Delivery } from '@switchboard/db';
import type { WorkerDeps } from '../deps';

/**
 * Turns one event into its deliveries: one statement creates a delivery per matching active
 * subscription of the event's tenant and one for its receptionist's legacy webhook_url, and
 * marks the event fanned out (see `fanOutEvent`). Only after that commit are the delivery
 * jobs added, so a crash in between leaves rows the reconciler finds; a re-run creates
 * nothing new and re-adds the jobs of the deliveries still open.
 */
export function fanOutProcessor(deps: WorkerDeps) {
  const { knex, logger } = deps;
  return async (job: Job<EventJob>): Promise<void> => {
    const data = parseEventJob(job.data);
    if (!data) {
      logger.error({ jobId: job.id }, 'fan-out: malformed job data; dropped');
      return;
    }
    const open = await fanOutEvent(knex, data.eventId);
    await enqueueDeliveries(deps, open);
  };
}

/** Adds the job for each delivery's next attempt (deterministic id: re-adding is harmless). */
export async function enqueueDeliveries(
  deps: WorkerDeps,
  deliveries: Array<Pick<Delivery, 'id' | 'round' | 'attempts' | 'nextAttemptAt'>>,
  delayMs = 0,
): Promise<void> {
  if (deliveries.length === 0) return;
  await deps.queues.deliveries.addBulk(
    deliveries.map((d) => {
      const data: DeliveryJob = { v: 1, deliveryId: d.id, round: d.round, attempt: d.attempts + 1 };
      const delay = Math.max(delayMs, d.nextAttemptAt ? d.nextAttemptAt.getTime() - Date.now() : 0);
      return { name: 'delivery', data, opts: { jobId: jobIds.delivery(data), delay } };
    }),
  );
}
