import { PROVISIONING_MAX_ATTEMPTS, type ProvisioningClaim } from '@switchboard/db';
import { enqueue, type ProvisioningJob } from '@switchboard/queues';
import type { WorkerDeps } from '../deps';
import type { ProvisioningTransitions } from './transitions';
import { ProvisioningError, type ProvisioningProvider } from './provider';

export interface ProvisioningPolicy {
  /** How long a claimed attempt may run before another worker may take over. */
  leaseMs: number;
  /** Wait before attempt n+1 after a transient failure of attempt n (last value repeats). */
  retryBackoffMs: readonly number[];
}

/** Anything a provider throws that is not a ProvisioningError is a transient failure. */
async function fromProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ProvisioningError) throw err;
    throw new ProvisioningError(
      'provider_error',
      `The provider failed: ${(err as Error).message ?? 'unknown error'}`,
      false,
    );
  }
}

/**
 * The provisioning processor (jobId = receptionist, round, attempt). Claims the attempt
 * durably, then: the number (the one already recorded for this receptionist, or one bought
 * with the receptionist's key and recorded durably at once), the assistant, ready. A
 * duplicate job, a stalled job re-run or a reconciler re-add claims nothing and does nothing;
 * a crash at any point leaves either nothing bought or a recorded number, and the provider's
 * key makes even a crash between the purchase and its record return the same number.
 */
export function provisionProcessor(
  deps: WorkerDeps,
  provider: ProvisioningProvider,
  transitions: ProvisioningTransitions,
  policy: ProvisioningPolicy,
) {
  const { logger } = deps;

  async function attempt(claim: ProvisioningClaim): Promise<void> {
    const r = claim.receptionist;
    let phoneNumber = claim.purchasedNumber;
    if (!phoneNumber) {
      const bought = await fromProvider(() =>
        provider.buyNumber({ key: r.id, areaCode: r.areaCode }),
      );
      await transitions.recordNumber(claim, bought);
      phoneNumber = bought;
    }
    const number = phoneNumber;
    const assistantId = await fromProvider(() =>
      provider.createAssistant({
        key: r.id,
        receptionistId: r.id,
        name: r.name,
        greeting: r.greeting,
        plan: r.plan,
        phoneNumber: number,
      }),
    );
    if (await transitions.ready(claim, number, assistantId)) {
      logger.info({ receptionistId: r.id, attempt: claim.attempt }, 'receptionist ready');
    }
  }

  async function failed(claim: ProvisioningClaim, err: ProvisioningError): Promise<void> {
    const ref = { id: claim.receptionist.id, round: claim.round, attempt: claim.attempt };
    const log = { receptionistId: ref.id, attempt: ref.attempt, code: err.code };
    if (err.permanent || claim.attempt >= PROVISIONING_MAX_ATTEMPTS) {
      await transitions.fail(ref, { code: err.code, message: err.message });
      logger.warn(log, 'provisioning failed');
      return;
    }
    const backoff = policy.retryBackoffMs;
    const delay = backoff[Math.min(claim.attempt, backoff.length) - 1] ?? 0;
    if (!(await transitions.release(claim, new Date(Date.now() + delay)))) return;
    logger.warn({ ...log, retryInMs: delay }, 'provisioning attempt failed; will retry');
    // If this add is lost, the reconciler adds the same job once the retry is overdue.
    await enqueue(deps.queues, 'provisioning', [
      {
        data: { v: 1, receptionistId: ref.id, round: ref.round, attempt: ref.attempt + 1 },
        opts: { delay },
      },
    ]);
  }

  return async (data: ProvisioningJob): Promise<void> => {
    const claim = await transitions.claim({
      id: data.receptionistId,
      round: data.round,
      attempt: data.attempt,
      leaseMs: policy.leaseMs,
    });
    if (!claim) return; // gone, final, or not this attempt's turn: nothing to do
    try {
      await attempt(claim);
    } catch (err) {
      if (!(err instanceof ProvisioningError)) throw err; // Postgres away: BullMQ retries
      await failed(claim, err);
    }
  };
}
