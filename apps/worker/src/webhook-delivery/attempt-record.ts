import {
  isTransientDbError,
  type AttemptOutcome,
  type AttemptRecord,
  type Delivery,
} from '@switchboard/db';
import type { SendErrorCode, SendResult } from '@switchboard/webhooks';
import type { WorkerDeps } from '../deps';
import type { DeliveryBatches } from './delivery-batches';

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
 * too, without logging the attempt at all (no attempt row is written and the delivery's
 * latest attempt stays as it was; the delivery row still counts the attempt and carries its
 * status code and error). An outage is thrown at once: the job fails, the claim lapses,
 * and the reconciler redoes the attempt once Postgres is back. Returns false when a manual
 * retry superseded this attempt or the delivery was canceled while it was in flight (its
 * outcome then changes nothing else; a canceled delivery still counts the attempt).
 */
export async function recordOutcome(
  deps: WorkerDeps,
  batches: DeliveryBatches,
  d: Delivery,
  r: AttemptResult,
  outcome: AttemptOutcome,
): Promise<boolean> {
  const excerpt = r.response_excerpt ? r.response_excerpt.slice(0, 4096) : null;
  // [how, excerpt, log the attempt, its headers]: each level keeps less of what came from outside.
  const plainer: Array<[string, string | null, boolean, boolean]> = [
    ['as it happened', excerpt, true, true],
    ['without the response excerpt', null, true, false],
    ['without logging the attempt', excerpt, false, false],
  ];
  let last: unknown;
  for (const [how, excerptOrNull, logAttempt, withHeaders] of plainer) {
    const record: Omit<AttemptRecord, 'outcome'> = {
      delivery: d,
      statusCode: r.status_code,
      error: r.error,
      durationMs: Math.round(r.duration_ms),
      excerpt: excerptOrNull,
      // Dropped with the excerpt: the plainer records keep only what cannot be refused. (An
      // empty body has no excerpt, yet its headers are kept: they are tied to the level.)
      requestHeaders: withHeaders ? (r.request_headers ?? null) : null,
      responseHeaders: withHeaders ? (r.response_headers ?? null) : null,
      logAttempt,
    };
    try {
      return await write(deps, batches, record, outcome);
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
 * The attempt (on the delivery row as its latest; the one it supersedes as an attempt row),
 * the delivery row and the subscription's counters, atomically, committed
 * asynchronously (a lost record is redone: the delivery is sent again with the same event
 * id). A success or a retry joins the process's record batch; a delivery that spent its
 * attempts (which may disable the subscription and cancel its other deliveries) is its own
 * statement, so that the streak counts every failure exactly.
 */
async function write(
  deps: WorkerDeps,
  batches: DeliveryBatches,
  record: Omit<AttemptRecord, 'outcome'>,
  outcome: AttemptOutcome,
): Promise<boolean> {
  if (outcome.kind !== 'failed') return batches.record({ ...record, outcome });
  const { knex, config, logger } = deps;
  const done = await batches.lifecycle.exhaust(knex, record, config.webhook.disableAfterFailures);
  if (done.disabledNow) {
    deps.metrics.subscriptionsDisabled.inc();
    logger.warn(
      {
        subscriptionId: record.delivery.subscriptionId,
        failures: done.consecutiveFailures,
        canceled: done.canceled,
      },
      'subscription disabled after consecutive failures',
    );
  }
  return done.moved;
}
