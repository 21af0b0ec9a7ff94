import { enqueue, type EventJob } from '@switchboard/queues';
import { fanOutEvent, type OpenDelivery } from '@switchboard/db';
import type { WorkerDeps } from '../deps';

/**
 * Turns one event into its deliveries: one statement creates a delivery per matching active
 * subscription of the event's tenant and one for its receptionist's legacy webhook_url, and
 * marks the event fanned out (see `fanOutEvent`). Only after that commit are the delivery
 * jobs added, so a crash in between leaves rows the reconciler finds; a re-run creates
 * nothing new and re-adds the jobs of the deliveries still open.
 */
export function fanOutProcessor(deps: WorkerDeps) {
  return async (data: EventJob): Promise<void> => {
    const open = await fanOutEvent(deps.knex, data.eventId);
    await enqueueDeliveries(deps, open);
  };
}

/**
 * Adds the job for each delivery's next attempt. The id is deterministic for a claim
 * generation (re-adding is harmless); the job names the delivery's lanes (in-flight caps).
 */
export async function enqueueDeliveries(
  deps: WorkerDeps,
  deliveries: readonly OpenDelivery[],
): Promise<void> {
  if (deliveries.length === 0) return;
  await enqueue(
    deps.queues,
    'deliveries',
    deliveries.map((d) => {
      const targetId = d.subscriptionId ?? d.receptionistId;
      return {
        data: {
          v: 1 as const,
          deliveryId: d.id,
          round: d.round,
          attempt: d.attempts + 1,
          ...(d.claims > 0 ? { claims: d.claims } : {}),
          ...(targetId ? { tenantId: d.tenantId, targetId } : {}),
        },
        opts: { delay: Math.max(0, d.nextAttemptAt ? d.nextAttemptAt.getTime() - Date.now() : 0) },
      };
    }),
  );
}
