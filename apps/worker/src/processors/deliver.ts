import type { Job } from 'bullmq';
import { buildEnvelope } from '@switchboard/events';
import {
  claimDelivery,
  recordAttemptFast,
  type AttemptOutcome,
  type Delivery,
} from '@switchboard/db';
import { SecretBoxError } from '@switchboard/crypto';
import { parseDeliveryJob, type DeliveryJob } from '@switchboard/queues';
import { signPayload, type SendResult } from '@switchboard/webhooks';
import type { WorkerDeps } from '../deps';
import { resolveTarget } from './delivery-target';
import { enqueueDeliveries } from './fan-out';

/** How long a delivery whose secret cannot be decrypted waits before it is tried again. */
const SECRET_RETRY_MS = 60_000;

/** The wait after the n-th failed attempt (1-based); the last value repeats. */
export function backoffAfter(schedule: readonly number[], failedAttempt: number): number {
  return schedule[Math.min(failedAttempt, schedule.length) - 1] ?? 0;
}

/**
 * Performs one attempt of one delivery. The row is claimed first (only the job made for
 * this exact round and attempt can claim it, and only one worker at a time); the attempt
 * and every counter change are then written in one transaction. A further attempt is a
 * delayed job, never a sleep that holds a worker slot.
 */
export function deliveryProcessor(deps: WorkerDeps) {
  const { config, stores, logger, metrics, sender } = deps;
  // A claim outlives the HTTP deadline comfortably; a crashed worker's claim then lapses.
  const lockMs = config.webhook.timeoutMs + 15_000;

  return async (job: Job<DeliveryJob>): Promise<void> => {
    const data = parseDeliveryJob(job.data);
    if (!data) {
      logger.error({ jobId: job.id }, 'delivery: malformed job data; dropped');
      return;
    }
    const claimed = await claimDelivery(
      deps.knex,
      data.deliveryId,
      data.round,
      data.attempt,
      lockMs,
    );
    if (!claimed) return; // gone, final, already past this attempt, or held by another worker
    const { delivery: d, event } = claimed;
    const log = logger.child({ deliveryId: d.id, eventId: d.eventId, attempt: data.attempt });
    let target: Awaited<ReturnType<typeof resolveTarget>>;
    try {
      target = await resolveTarget(deps, d, claimed.subscription);
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      // An operator problem, not the subscriber's: the secret was encrypted under another
      // SECRET_ENCRYPTION_KEY. Nothing is sent and nothing is counted; the delivery waits
      // (the reconciler tries again) until the key is put right.
      await stores.deliveries.release(d.id, SECRET_RETRY_MS);
      log.error(
        'cannot decrypt the signing secret: is SECRET_ENCRYPTION_KEY the one it was stored with?',
      );
      return;
    }
    if (!target) {
      await stores.deliveries.cancel(d.id);
      metrics.deliveries.inc({ outcome: 'canceled' });
      log.info('delivery canceled: target gone or disabled');
      return;
    }
    const body = JSON.stringify(buildEnvelope(event));
    const headers = signPayload({ secret: target.secret, eventId: event.id, body });
    const result = await sender.send({ url: target.url, body, headers });
    metrics.attemptDuration.observe(
      { result: result.delivered ? 'success' : 'failure' },
      result.duration_ms / 1000,
    );

    const outcome = decide(config.webhook.maxAttempts, config.webhook.retryBackoffMs, d, result);
    if (!(await record(deps, d, result, outcome))) {
      log.info('delivery attempt superseded by a manual retry');
      return;
    }
    metrics.deliveries.inc({ outcome: outcome.kind });
    if (outcome.kind === 'succeeded' && d.attempts === 0 && d.round === 1) {
      metrics.deliveryLag.observe((Date.now() - event.createdAt.getTime()) / 1000);
    }
    log.info(
      {
        outcome: outcome.kind,
        statusCode: result.status_code,
        error: result.error,
        ms: result.duration_ms,
      },
      'delivery attempt',
    );
    if (outcome.kind === 'retry') {
      const next: Delivery = {
        ...d,
        attempts: d.attempts + 1,
        nextAttemptAt: outcome.nextAttemptAt,
      };
      await enqueueDeliveries(deps, [next]);
    }
  };
}

function decide(
  maxAttempts: number,
  schedule: readonly number[],
  d: Delivery,
  r: SendResult,
): AttemptOutcome {
  if (r.delivered) return { kind: 'succeeded' };
  const attempt = d.attempts + 1;
  if (attempt >= maxAttempts) return { kind: 'failed' };
  return { kind: 'retry', nextAttemptAt: new Date(Date.now() + backoffAfter(schedule, attempt)) };
}

/** The attempt row, the delivery row and the subscription's counters, atomically. */
/**
 * The attempt row, the delivery row and the subscription's counters, atomically. False when
 * a manual retry superseded this attempt: its outcome then changes nothing else. The common
 * outcomes take one statement; a delivery that spent its attempts (which may disable the
 * subscription and cancel its other deliveries) takes a transaction.
 */
async function record(
  deps: WorkerDeps,
  d: Delivery,
  r: SendResult,
  outcome: AttemptOutcome,
): Promise<boolean> {
  const { knex, stores, config, logger } = deps;
  const attempt = {
    statusCode: r.status_code,
    error: r.error,
    durationMs: Math.round(r.duration_ms),
    excerpt: r.response_excerpt ? r.response_excerpt.slice(0, 1024) : null,
  };
  if (outcome.kind !== 'failed') return recordAttemptFast(knex, d, attempt, outcome);
  return knex.transaction(async (trx) => {
    const moved = await stores.deliveries.recordAttempt(trx, d, attempt, outcome);
    if (!moved) return false;
    if (!d.subscriptionId) return true;
    {
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
    }
    return true;
  });
}
