import { randomUUID } from 'node:crypto';
import { DelayedError, type Job } from 'bullmq';
import { buildEnvelope } from '@switchboard/events';
import type { ClaimedDelivery, ClaimRequest, Delivery } from '@switchboard/db';
import { SecretBoxError } from '@switchboard/crypto';
import type { DeliveryJob } from '@switchboard/queues';
import { signPayload } from '@switchboard/webhooks';
import type { Logger } from '@switchboard/logger';
import type { WorkerDeps } from '../deps';
import { decide, recordOutcome, type AttemptResult } from './attempt-record';
import type { DeliveryBatches } from './delivery-batches';
import { resolveTarget } from './delivery-target';
import { sendTraced } from './traced-send';
import { enqueueDeliveries, isRecovery } from './enqueue-deliveries';
import type { InFlightLanes, Lane, Verdict } from './in-flight';
import type { Throttle } from './throttle';
import type { AttemptLog } from './attempt-log';

/** How long a delivery whose secret cannot be decrypted waits before it is tried again. */
const SECRET_RETRY_MS = 60_000;
/**
 * How long a claim and an in-flight slot outlive the HTTP deadline: enough to record the
 * outcome (a batched statement: milliseconds; a record slower than this only risks sending
 * again, with the same event id). An attempt of a worker killed mid-attempt runs again after
 * WEBHOOK_TIMEOUT_MS + this, plus at most one lapse check (LAPSE_CHECK_MS, 0.5 s) and the time
 * to send: within WEBHOOK_TIMEOUT_MS + 5 s.
 */
export const CLAIM_MARGIN_MS = 3_000;
/**
 * An attempt is sent only this soon after its claim was asked for (`Claim.since`): its POST
 * (at most WEBHOOK_TIMEOUT_MS) then ends at least CLAIM_MARGIN_MS − SEND_WITHIN_MS = 1 s
 * before the claim can lapse, time to record it. An attempt later than this (its process
 * stalled) sends nothing and leaves its claim to lapse: the reconciler's job makes it.
 */
export const SEND_WITHIN_MS = 2_000;
/**
 * Claims of one attempt that may end without a recorded outcome (a worker killed between
 * sending and recording, a record that failed) before the attempt is given up unsent.
 */
const MAX_CLAIMS_PER_ATTEMPT = 3;
/**
 * How long a delivery of a paused subscription waits before it looks again; a resume makes
 * it due at once (the API wakes it), so this only bounds a lost wake-up.
 */
const PAUSED_RECHECK_MS = 10 * 60_000;
/**
 * A parked job wakes by itself after this long if no wake-up reached it (the default of
 * WebhookDeliveryOptions.parkedDelayMs). Only a safety delay: a job woken while its lane is
 * still full parks again.
 */
export const PARKED_DELAY_MS = 30_000;

/** The result of an attempt that was given up unsent: its earlier claims recorded nothing. */
const OUTCOME_UNKNOWN: AttemptResult = {
  delivered: false,
  status_code: null,
  error: 'outcome_unknown',
  response_excerpt: null,
  duration_ms: 0,
};

/**
 * One attempt of one delivery, from its claim to its recorded outcome: `claimed` when the
 * caller already holds the claim (the relay created the delivery claimed, ./first-attempts.ts),
 * else the attempt claims `request` first. Ends with `throttledUntil` when the attempt was
 * not made because the subscription's throttle (./throttle.ts) kept it a later slot: the row
 * was given back, due then, and the caller makes the attempt's job wait for it.
 */
export type Attempt = (request: ClaimRequest, claimed?: Claim) => Promise<AttemptEnd>;
/**
 * A claim the caller holds: the row as claimed, and when the claim was asked for (ms);
 * `onSent` runs once the POST has its response (or failed), before the outcome is recorded.
 */
export interface Claim {
  claimed: ClaimedDelivery;
  since: number;
  onSent?: () => void;
}
export type AttemptEnd = { throttledUntil: number } | undefined;

/**
 * The deliveries processor: retries, manual retries, recoveries, and first attempts the
 * relay could not make itself. First a slot in the delivery's lanes (its target and its
 * tenant, see in-flight.ts): a job refused one waits delayed, holding no worker slot. Then
 * one attempt, claimed.
 */
export function deliveryProcessor(
  deps: WorkerDeps,
  lanes: InFlightLanes,
  attempt: Attempt,
  parkedDelayMs = PARKED_DELAY_MS,
) {
  return async (data: DeliveryJob, job: Job, token?: string): Promise<void> => {
    const lane = await laneOf(deps, data);
    if (!lane) return; // the delivery is gone
    const jobId = job.id as string;
    const holder = `${jobId}#${randomUUID()}`;
    // A job that recovers an attempt a dead worker may have had in flight takes the lane's
    // next free slot, before any backlog (see in-flight.ts, `urgent`).
    const urgent = isRecovery(data, job);
    let verdict = await lanes.acquire(lane, holder, jobId);
    if (verdict !== 'ok' && urgent)
      verdict = await awaitUrgentSlot(lanes, lane, verdict, holder, jobId);
    if (verdict !== 'ok') {
      await job.moveToDelayed(Date.now() + parkedDelayMs, token);
      await lanes.park(lane, verdict, jobId, urgent);
      deps.metrics.deliveryWaits.inc({ lane: verdict });
      throw new DelayedError();
    }
    const request = { deliveryId: data.deliveryId, round: data.round, attempt: data.attempt };
    let end: AttemptEnd;
    try {
      end = await lanes.hold(
        lane,
        holder,
        () => attempt(request),
        (err) => deps.logger.warn({ err, deliveryId: data.deliveryId }, 'slot not renewed'),
      );
    } finally {
      // Not fatal: the slot expires by itself, and parked jobs are woken periodically.
      await lanes.release(lane, holder).catch((err: unknown) => {
        deps.logger.warn({ err, deliveryId: data.deliveryId }, 'could not release a lane slot');
      });
    }
    if (end) {
      // Throttled: this job waits for the slot kept for it (nothing was attempted).
      await job.moveToDelayed(end.throttledUntil, token);
      throw new DelayedError();
    }
  };
}

/** How long a recovered attempt waits, holding its worker slot, for its lane's next slot. */
const URGENT_WAIT_MS = 5_000;
const URGENT_POLL_MS = 25;

/**
 * A recovered attempt refused a slot is listed as urgent, so the next slot its lane frees is
 * reserved for it, and waits for that slot here, in its worker slot: parked in BullMQ it
 * would be promoted to the tail of the queue, behind the backlog it is meant to go before.
 * There are a handful of such jobs per crash (at most the dead process's slots). After
 * URGENT_WAIT_MS it parks like any job (still urgent) and gives its worker slot back.
 */
async function awaitUrgentSlot(
  lanes: InFlightLanes,
  lane: Lane,
  refused: Exclude<Verdict, 'ok'>,
  holder: string,
  jobId: string,
): Promise<Verdict> {
  await lanes.park(lane, refused, jobId, true);
  const until = Date.now() + URGENT_WAIT_MS;
  let verdict: Verdict = refused;
  while (verdict !== 'ok' && Date.now() < until) {
    await new Promise((r) => setTimeout(r, URGENT_POLL_MS));
    verdict = await lanes.acquire(lane, holder, jobId);
  }
  return verdict;
}

/** The lanes named by the job, or read from the row for jobs made without them. */
async function laneOf(deps: WorkerDeps, data: DeliveryJob): Promise<Lane | undefined> {
  if (data.tenantId && data.targetId) return { tenantId: data.tenantId, targetId: data.targetId };
  const d = await deps.stores.deliveries.get(deps.knex, data.deliveryId);
  const targetId = d?.subscriptionId ?? d?.receptionistId;
  return d && targetId ? { tenantId: d.tenantId, targetId } : undefined;
}

/**
 * One attempt: the row is claimed (only a caller for this exact round and attempt can claim
 * it, and only one worker at a time; the relay's first attempts come claimed), the envelope
 * is signed and sent, and the outcome is recorded atomically; the claim and the record join
 * the process's batches. Every attempt is sent under its claim, whose lease
 * (WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS) outlasts the POST's deadline: a second holder only
 * exists once the first could not record in time (its worker died or stalled that long, or
 * Postgres was away). A further attempt is a delayed job, never a sleep holding a slot. The
 * caller holds a lane slot.
 */
export function attemptRunner(
  deps: WorkerDeps,
  batches: DeliveryBatches,
  throttle: Throttle,
  attemptLog: AttemptLog,
): Attempt {
  const { config, knex, logger, metrics, sender } = deps;

  return async (data: ClaimRequest, given?: Claim): Promise<AttemptEnd> => {
    const since = Date.now();
    // Gone, final, already past this attempt, or held by another worker: nothing to do.
    const claimed = given?.claimed ?? (await batches.claim(data));
    if (!claimed) return;
    return attemptClaimed(data, { ...given, claimed, since: given?.since ?? since });
  };

  async function attemptClaimed(data: ClaimRequest, claim: Claim): Promise<AttemptEnd> {
    const { claimed } = claim;
    const { delivery: d, event } = claimed;
    // The attempt's fields, made only for a line that is written (a success is counted).
    const fields = () => ({ deliveryId: d.id, eventId: d.eventId, attempt: data.attempt });
    let child: Logger | undefined;
    const log = (): Logger => (child ??= logger.child(fields()));
    /** Nothing sent: the claim is given back and the row waits `ms`. */
    const putBack = (ms: number): Promise<void> => batches.lifecycle.release(knex, [d.id], ms);
    let result: AttemptResult;
    if (d.claims > MAX_CLAIMS_PER_ATTEMPT) {
      // Earlier claims of this attempt never recorded an outcome: sending it again could loop
      // for ever. It counts as a failed attempt instead (retried, or failed at the limit).
      log().error({ claims: d.claims }, 'attempt given up: earlier claims recorded no outcome');
      result = OUTCOME_UNKNOWN;
    } else {
      let target: Awaited<ReturnType<typeof resolveTarget>>;
      try {
        target = await resolveTarget(deps, d, claimed.subscription);
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        // An operator problem, not the subscriber's: the secret was encrypted under another
        // SECRET_ENCRYPTION_KEY. Nothing is sent and nothing is counted; the delivery waits
        // (the reconciler tries again) until the key is put right.
        await putBack(SECRET_RETRY_MS);
        log().error(
          'cannot decrypt the signing secret: is SECRET_ENCRYPTION_KEY the one it was stored with?',
        );
        return;
      }
      const slotKey = `${d.id}/${d.round}/${data.attempt}`;
      if (target === 'paused') {
        // Paused by the tenant: nothing sent, nothing counted; it goes out on resume (and
        // waits its turn again if it had a throttle slot).
        await putBack(PAUSED_RECHECK_MS);
        if (d.subscriptionId && claimed.subscription?.rateLimitPerSecond) {
          await throttle.forget(d.subscriptionId, slotKey);
        }
        log().info('delivery waits: subscription paused');
        return;
      }
      if (!target) {
        await batches.lifecycle.cancel(knex, d.id);
        metrics.deliveries.inc({ outcome: 'canceled' });
        log().info('delivery canceled: target gone or disabled');
        return;
      }
      const limit = claimed.subscription?.rateLimitPerSecond;
      if (limit && d.subscriptionId) {
        const { waitMs, fresh } = await throttle.reserve(d.subscriptionId, slotKey, limit);
        if (waitMs > 0) {
          // Not an attempt: nothing sent, nothing counted; the row waits for its slot.
          await putBack(waitMs);
          if (fresh) metrics.deliveriesThrottled.inc();
          log().debug({ waitMs }, 'delivery waits: subscription throttled');
          return { throttledUntil: Date.now() + waitMs };
        }
      }
      // Too late to send under this claim (SEND_WITHIN_MS): it lapses, and the attempt is the
      // reconciler's job's. Nothing was sent, so that job's POST is the only one.
      if (Date.now() - claim.since > SEND_WITHIN_MS) {
        metrics.attemptsWithheld.inc();
        log().warn('attempt not sent: too late for its claim; it is made again once that lapses');
        return;
      }
      const body = JSON.stringify(buildEnvelope(event));
      const headers = signPayload({
        secret: target.secret,
        previousSecret: target.previousSecret,
        eventId: event.id,
        body,
      });
      result = await sendTraced(sender, { url: target.url, body, headers }, claimed, data.attempt);
      claim.onSent?.();
      metrics.attemptDuration.observe(
        { result: result.delivered ? 'success' : 'failure' },
        result.duration_ms / 1000,
      );
    }

    const outcome = decide(config.webhook.maxAttempts, config.webhook.retryBackoffMs, d, result);
    const recorded = await recordOutcome(deps, batches, d, result, outcome);
    if (!recorded) {
      // Counted on the delivery all the same if it was canceled meanwhile (see RECORD_SQL).
      log().info(
        'delivery attempt recorded; the delivery was canceled or retried by hand meanwhile',
      );
      return;
    }
    metrics.deliveries.inc({ outcome: outcome.kind });
    if (outcome.kind === 'succeeded' && d.attempts === 0 && d.round === 1) {
      metrics.deliveryLag.observe((Date.now() - event.createdAt.getTime()) / 1000);
    }
    const line = {
      outcome: outcome.kind,
      statusCode: result.status_code,
      error: result.error,
      ms: result.duration_ms,
    };
    // A success is counted into a summary line (./attempt-log.ts); any other outcome is a line.
    if (outcome.kind === 'succeeded')
      attemptLog.success(() => ({ ...fields(), ...line }), result.duration_ms);
    else log().info(line, 'delivery attempt');
    if (outcome.kind === 'retry') {
      const next: Delivery = {
        ...d,
        attempts: d.attempts + 1,
        claims: 0,
        nextAttemptAt: outcome.nextAttemptAt,
      };
      await enqueueDeliveries(deps, [next]);
    }
  }
}
