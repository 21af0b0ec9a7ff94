import { enqueueFromRequest } from '@switchboard/queues';
import type { Deps } from '../../deps';

/**
 * Adds the job of attempt 1 of a provisioning round, after the row is committed; never fails
 * the request (the row is the truth: the provisioning reconciler adds the job if this one
 * is lost).
 */
export async function enqueueFirstAttempt(
  deps: Deps,
  receptionistId: string,
  round: number,
): Promise<void> {
  try {
    await enqueueFromRequest(deps.queues, deps.redis, 'provisioning', {
      data: { v: 1, receptionistId, round, attempt: 1 },
    });
  } catch (err) {
    deps.logger.warn(
      { err, receptionistId },
      'provisioning job not added; the provisioning reconciler will enqueue it',
    );
  }
}
