import { applyTelephonyMessage, type TelephonyMessage } from '@switchboard/telephony';
import type { WorkerDeps } from '../deps';

/**
 * Applies a telephony message from the worker with a durable commit. The worker's
 * connections commit asynchronously (its own bookkeeping can be redone), but a call's state
 * and its outbox events are facts reported by the phone side: they get the same durability
 * as ingestion through the API.
 */
export async function reportDurably(deps: WorkerDeps, message: TelephonyMessage): Promise<void> {
  await deps.knex.transaction(async (trx) => {
    await trx.raw('SET LOCAL synchronous_commit = on');
    await applyTelephonyMessage(trx, message);
  });
}
