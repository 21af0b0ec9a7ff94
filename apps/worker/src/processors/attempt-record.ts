import {
  commitAsynchronously,
  isTransientDbError,
  recordAttemptFast,
  type AttemptOutcome,
  type AttemptRecord,
  type Delivery,
} from '@switchboard/db';
import type { SendErrorCode, SendResult } from '@switchboard/webhooks';
import type { WorkerDeps } from '../deps';

/**
 * What an attempt came to: the sender's result, or `outcome_unknown` for an attempt given up
 * unsent because its earlier claims never recorded an outcome.
 */
export type AttemptResult = Omit<SendResult, 'error'> & {
  error: SendErrorCode | 'outcome_unknown' | null;
};

/** The wait after the n-th failed attempt (1-based); the last value repeats. */
export function backoffAfter(schedule: readonly number[], failedAttempt: number): number {
  return schedule[Math.min(failedAttempt, schedule.length) - 1] ?? 0;
}

/** What one attempt's result does to the delivery: success, another attempt, or failure. */
export function decide(
  maxAttempts: number,
  schedule: readonly number[],
  d: Delivery,
  r: AttemptResult,
): AttemptOutcome {
  if (r.delivered) return { kind: 'succeeded' };
  const attempt = d.attempts + 1;
  if (attempt >= maxAttempts) return { kind: 'failed' };
  return { kind: 'retry', nextAttemptAt: new Date(Date.now() + backoffAfter(schedule, attempt)) };
}

/**
 * Records an attempt's outcome, so that the delivery always moves on, whatever in the record
 * Postgres refuses. The attempt is written as it happened; if that fails for a reason that
 * would fail again (not an outage), without the receiver's response excerpt; if that fails
 * too, without an attempt row at all (the delivery row still counts the attempt and carries
 * its status code and error). An outage is thrown at once: the job fails, the claim lapses,
 * and the reconciler redoes the attempt once Postgres is back. Returns false when a manual
 * retry superseded this attempt (its outcome then changes nothing else).
 */
export async function recordOutcome(
  deps: WorkerDeps,
  d: Delivery,
  r: AttemptResult,
  outcome: AttemptOutcome,
): Promise<boolean> {
  const attempt: AttemptRecord = {
    statusCode: r.status_code,
    error: r.error,
    durationMs: Math.round(r.duration_ms),
    excerpt: r.response_excerpt ? r.response_excerpt.slice(0, 1024) : null,
  };
  const plainer: Array<[string, AttemptRecord, boolean]> = [
    ['as it happened', attempt, true],
    ['without the response excerpt', { ...attempt, excerpt: null }, true],
    ['without an attempt row', attempt, false],
  ];
  let last: unknown;
  for (const [how, record, logAttempt] of plainer) {
    try {
      return await write(deps, d, record, outcome, logAttempt);
    } catch (err) {
      if (isTransientDbError(err)) throw err;
      last = err;
      deps.logger.error(
        { err, deliveryId: d.id, attempt: d.attempts + 1, how },
        'could not record a delivery attempt; recording it more plainly',
      );
    }
  }
  throw last;
}

/**
 * The attempt row, the delivery row and the subscription's counters, atomically, committed
 * asynchronously (a lost record is redone: the delivery is sent again with the same event
 * id). The common outcomes take one statement; a delivery that spent its attempts (which may
 * disable the subscription and cancel its other deliveries) takes a transaction.
 */
async function write(
  deps: WorkerDeps,
  d: Delivery,
  attempt: AttemptRecord,
  outcome: AttemptOutcome,
  logAttempt: boolean,
): Promise<boolean> {
  const { knex, stores, config, logger } = deps;
  if (outcome.kind !== 'failed') return recordAttemptFast(knex, d, attempt, outcome, logAttempt);
  return knex.transaction(async (trx) => {
    await commitAsynchronously(trx);
    const moved = await stores.deliveries.recordAttempt(trx, d, attempt, outcome, logAttempt);
    if (!moved) return false;
    if (!d.subscriptionId) return true;
    const counted = await stores.subscriptions.recordDeliveryFailure(
      trx,
      d.subscriptionId,
      config.webhook.disableAfterFailures,
    );
    if (counted?.disabledNow) {
      const canceled = await stores.deliveries.cancelOpenForSubscription(trx, d.subscriptionId);
      logger.warn(
        { subscriptionId: d.subscriptionId, failures: counted.consecutiveFailures, canceled },
        'subscription disabled after consecutive failures',
      );
    }
    return true;
  });
}
