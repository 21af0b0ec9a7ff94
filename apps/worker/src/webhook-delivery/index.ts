import { createKnex } from '@switchboard/db';
import { catalog, resetIfIdle } from '@switchboard/queues';
import { composite, type Component } from '../component';
import type { WorkerDeps } from '../deps';
import { reconcileTimings, type ReconcileOptions } from '../reconcile';
import { startQueueWorker, type QueueTimings } from '../queue-worker';
import { startTicker } from '../ticker';
import { attemptRunner, CLAIM_MARGIN_MS, deliveryProcessor } from './deliver';
import { BATCH_MAX_RUNNING, createDeliveryBatches } from './delivery-batches';
import { FirstAttempts } from './first-attempts';
import { InFlightLanes } from './in-flight';
import { startReconciler } from './reconciler';
import { startRelay } from './relay';
import { createThrottle } from './throttle';
import { AttemptLog } from './attempt-log';

export interface WebhookDeliveryOptions extends QueueTimings, ReconcileOptions {
  /** How often parked deliveries are woken when their lane has room (default 1000 ms). */
  laneWakeIntervalMs?: number;
  /** A parked delivery's safety delay, when no wake-up reaches it (PARKED_DELAY_MS). */
  parkedDelayMs?: number;
}

/**
 * The delivery statements' own connections: BATCH_MAX_RUNNING for claims and as many for
 * records (one runs at a time, a second for calls that waited BATCH_MAX_WAIT_MS behind a
 * slow one), all prepared at boot, and one for the relay's statement; and the wait for that.
 */
const STATEMENT_CONNECTIONS = 2 * BATCH_MAX_RUNNING + 1;
const PREPARE_WAIT_MS = 5_000;

/**
 * Webhook delivery: the outbox relay (fan-out and first attempts), the deliveries queue
 * (retries, recoveries, first attempts the relay handed on), the lane waker and the
 * reconciler. One component, so the runner starts and drains it with a single line; its
 * parts stop together.
 */
export async function startWebhookDelivery(
  deps: WorkerDeps,
  opts: WebhookDeliveryOptions = {},
): Promise<Component> {
  const concurrency = deps.config.workerConcurrency;
  const lanes = new InFlightLanes(
    deps.redis,
    deps.config.queuePrefix,
    deps.queues.deliveries,
    catalog.deliveries.name,
    {
      perTarget: deps.config.webhook.maxInFlightPerSubscription,
      perTenant: deps.config.webhook.maxInFlightPerTenant,
      slotTtlMs: deps.config.webhook.timeoutMs + CLAIM_MARGIN_MS,
    },
  );
  // The delivery path's hot statements are batched per process, and run on connections of
  // their own that plan each once (generic plans: their partition bounds are parameters,
  // pruned as each run starts), prepared before the first job.
  const statements = createKnex(deps.config, {
    poolMax: STATEMENT_CONNECTIONS,
    genericPlans: true,
  });
  const batches = createDeliveryBatches(
    statements,
    deps.config.webhook.timeoutMs + CLAIM_MARGIN_MS,
    deps.stores.deliveryLifecycle,
  );
  // Not fatal, and waited for at most PREPARE_WAIT_MS (Postgres may be away at boot): a
  // statement not prepared now is prepared on first use.
  const prepared = batches.lifecycle
    .prepare(statements, STATEMENT_CONNECTIONS)
    .catch((err: unknown) =>
      deps.logger.warn({ err }, 'could not prepare the delivery statements at boot'),
    );
  await Promise.race([prepared, new Promise((r) => setTimeout(r, PREPARE_WAIT_MS).unref())]);
  const attemptLog = new AttemptLog(deps.logger);
  const lockMs = deps.config.webhook.timeoutMs + CLAIM_MARGIN_MS;
  const attempt = attemptRunner(
    deps,
    batches,
    createThrottle(deps.redis, deps.config.queuePrefix),
    attemptLog,
  );
  // First attempts: at most `concurrency` in flight at once in this process, made by the
  // relay that created them (the rest fall back to delivery jobs).
  const firstAttempts = new FirstAttempts(
    deps,
    batches,
    lanes,
    attempt,
    concurrency,
    opts.parkedDelayMs,
  );
  const parts: Component[] = [
    // The relay first stops (no new first attempts), then the running ones finish, then the
    // lane slots they handed on go back to their lanes.
    startRelay(deps, { attempts: firstAttempts, lockMs, db: statements }),
    startQueueWorker(
      deps,
      'deliveries',
      deliveryProcessor(deps, lanes, attempt, opts.parkedDelayMs),
      {
        ...opts,
        concurrency,
      },
    ),
    // Wakes parked deliveries whose lane has room again: slots that expired (a worker died)
    // or wake-ups that were lost. Releases wake the next parked job at once otherwise.
    // It also clears the queue's fair counts whenever it is empty.
    startTicker('lane-waker', opts.laneWakeIntervalMs ?? 1_000, deps.logger, async () => {
      await lanes.wakeAll();
      await resetIfIdle(deps.queues.deliveries);
    }),
    startReconciler(deps, batches.lifecycle, reconcileTimings(opts)),
  ];
  // The statements' pool outlives every part that runs them; the attempt log's last counts are
  // written once the attempts are over.
  return composite('webhook-delivery', parts, [attemptLog, { close: () => statements.destroy() }]);
}
