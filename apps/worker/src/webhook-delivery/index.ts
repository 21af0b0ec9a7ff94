import { createKnex } from '@switchboard/db';
import { catalog, resetIfIdle } from '@switchboard/queues';
import { composite, type Component } from '../component';
import type { WorkerDeps } from '../deps';
import { reconcileTimings, type ReconcileOptions } from '../reconcile';
import { startQueueWorker, type QueueTimings } from '../queue-worker';
import { startTicker } from '../ticker';
import { attemptRunner, CLAIM_MARGIN_MS, deliveryProcessor } from './deliver';
import { BATCH_MAX_RUNNING, createDeliveryBatches } from './delivery-batches';
import { fanOutProcessor } from './fan-out';
import { InFlightLanes } from './in-flight';
import { InlineAttempts } from './inline-attempts';
import { startReconciler } from './reconciler';
import { startRelay } from './relay';
import { WarmSlots } from './warm-slots';
import { createThrottle } from './throttle';
import { AttemptLog } from './attempt-log';

export interface WebhookDeliveryOptions extends QueueTimings, ReconcileOptions {
  /** How often parked deliveries are woken when their lane has room (default 1000 ms). */
  laneWakeIntervalMs?: number;
  /**
   * How long a job waits for the first attempts it took before it claims those still
   * running (default LEASE_WAIT_MS, ./first-attempt-lease.ts). Tests that count a
   * delivery's writes lengthen it, so that a loaded machine never turns a take into a claim.
   */
  leaseWaitMs?: number;
}

/**
 * The delivery statements' own connections: as many as their batches run at once (four kinds
 * of statement, BATCH_MAX_RUNNING each), all prepared at boot, and one for the relay's claim
 * transaction; and the wait for that.
 */
const STATEMENT_CONNECTIONS = 4 * BATCH_MAX_RUNNING + 1;
const PREPARE_WAIT_MS = 5_000;

/**
 * Webhook delivery: the events queue (fan-out and first attempts), the deliveries queue
 * (retries), the lane waker, the outbox relay and the reconciler. One component, so the
 * runner starts and drains it with a single line; its parts stop together.
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
  const statements = createKnex(deps.config.databaseUrl, {
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
  const attempt = attemptRunner(
    deps,
    batches,
    createThrottle(deps.redis, deps.config.queuePrefix),
    attemptLog,
  );
  // Fan-out and first attempts: half as many event jobs as delivery jobs (an event job may
  // start many attempts), and at most `concurrency` first attempts in flight at once in this
  // process (the rest fall back to delivery jobs). Event jobs do not wait for them.
  const inline = new InlineAttempts(concurrency);
  // First attempts hand their lane slots on to the next first attempt of the same lane.
  const warm = new WarmSlots(lanes, (err) =>
    deps.logger.warn({ err }, 'could not release a lane slot'),
  );
  const events = startQueueWorker(
    deps,
    'events',
    fanOutProcessor(
      deps,
      batches,
      lanes,
      attempt,
      inline,
      warm,
      opts.leaseWaitMs,
      opts.lockDurationMs ?? catalog.events.timings.lockDurationMs,
    ),
    { ...opts, concurrency: Math.max(2, Math.ceil(concurrency / 2)) },
  );
  const parts: Component[] = [
    // The event worker first stops (no new inline attempts), then the running ones finish,
    // then the slots they handed on go back to their lanes.
    {
      name: events.name,
      close: () =>
        events
          .close()
          .then(() => inline.drain())
          .then(() => warm.close()),
    },
    startQueueWorker(
      deps,
      'deliveries',
      deliveryProcessor(
        deps,
        lanes,
        attempt,
        opts.leaseWaitMs,
        opts.lockDurationMs ?? catalog.deliveries.timings.lockDurationMs,
      ),
      {
        ...opts,
        concurrency,
      },
    ),
    // Wakes parked deliveries whose lane has room again: slots that expired (a worker died)
    // or wake-ups that were lost. Releases wake the next parked job at once otherwise.
    // It also clears the queues' fair counts whenever a queue is empty.
    startTicker('lane-waker', opts.laneWakeIntervalMs ?? 1_000, deps.logger, async () => {
      await lanes.wakeAll();
      await resetIfIdle(deps.queues.deliveries);
      await resetIfIdle(deps.queues.events);
    }),
    startRelay(deps, { db: statements }),
    startReconciler(deps, batches.lifecycle, reconcileTimings(opts)),
  ];
  // The statements' pool outlives every part that runs them; the attempt log's last counts are
  // written once the attempts are over.
  return composite('webhook-delivery', parts, [attemptLog, { close: () => statements.destroy() }]);
}
