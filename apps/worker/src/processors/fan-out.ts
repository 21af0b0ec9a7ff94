import type { Job } from 'bullmq';
import { jobIds, parseEventJob, type DeliveryJob, type EventJob } from '@switchboard/queues';
import type { Delivery } from '@switchboard/db';
import type { WorkerDeps } from '../deps';

/**
 * Turns one event into its deliveries: in one transaction, a row per matching active
 * subscription of the event's tenant and one for the legacy webhook_url of its receptionist,
 * then `fanned_out_at`. Only after the commit are the delivery jobs added, so a crash in
 * between leaves rows the reconciler finds; a re-run finds the rows already there (unique
 * per event and target) and only re-adds jobs for those still open.
 */
export function fanOutProcessor(deps: WorkerDeps) {
  const { knex, stores, logger } = deps;
  return async (job: Job<EventJob>): Promise<void> => {
    const data = parseEventJob(job.data);
    if (!data) {
      logger.error({ jobId: job.id }, 'fan-out: malformed job data; dropped');
      return;
    }
    const event = await stores.events.get(data.eventId);
    if (!event) return;
    if (!event.fannedOutAt) {
      await knex.transaction(async (trx) => {
        const locked = await trx('events')
          .where({ id: event.id })
          .whereNull('fanned_out_at')
          .forUpdate()
          .first('id');
        if (!locked) return; // another worker fanned it out meanwhile
        const subscriptionIds = await stores.subscriptions.activeMatching(
          trx,
          event.tenantId,
          event.type,
        );
        const rows: Array<{
          tenantId: string;
          eventId: string;
          subscriptionId?: string;
          receptionistId?: string;
        }> = subscriptionIds.map((subscriptionId) => ({
          tenantId: event.tenantId,
          eventId: event.id,
          subscriptionId,
        }));
        if (event.receptionistId) {
          const legacy = await stores.receptionists.getWebhookTarget(event.receptionistId, trx);
          if (legacy?.url)
            rows.push({
              tenantId: event.tenantId,
              eventId: event.id,
              receptionistId: event.receptionistId,
            });
        }
        await stores.deliveries.insertMany(trx, rows);
        await trx('events').where({ id: event.id }).update({ fanned_out_at: trx.fn.now() });
      });
    }
    await enqueueDeliveries(deps, await stores.deliveries.openForEvent(event.id));
    logger.debug({ eventId: event.id, type: event.type }, 'fan-out done');
  };
}

/** Adds the job for each delivery's next attempt (deterministic id: re-adding is harmless). */
export async function enqueueDeliveries(
  deps: WorkerDeps,
  deliveries: Delivery[],
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
