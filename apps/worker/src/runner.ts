import type { Server } from 'node:http';
import { catalog, probeRedis } from '@switchboard/queues';
import { serveMetrics } from '@switchboard/telemetry';
import { startCampaigns } from './campaigns';
import type { Component } from './component';
import { createQueueDashboard, type QueueDashboard } from './dashboard';
import type { WorkerDeps } from './deps';
import { startDialler } from './dialler';
import { startLeadImports } from './lead-imports';
import { collectQueueDepths } from './metrics';
import { startProvisioning, type ProvisioningOptions } from './provisioning';
import { startQueueWorker, type QueueTimings } from './queue-worker';
import { attemptRunner, CLAIM_MARGIN_MS, deliveryProcessor } from './processors/deliver';
import { createDeliveryBatches } from './processors/delivery-batches';
import { InFlightLanes } from './processors/in-flight';
import { fanOutProcessor } from './processors/fan-out';
import { InlineAttempts } from './processors/inline-attempts';
import { startReconciler } from './processors/reconciler';
import { startRelay } from './processors/relay';
import { startSmsSender } from './sms';
import { startTicker } from './ticker';

export interface RunnerOptions extends QueueTimings {
  /** Port of /metrics; 0 picks a free one, null serves none. */
  metricsPort?: number | null;
  reconcileIntervalMs?: number;
  reconcileGraceMs?: number;
  /** Provider, lease and retry timings of receptionist provisioning (tests). */
  provisioning?: ProvisioningOptions;
  /** How long an SMS may stay claimed before it is failed as `send_interrupted` (120 s). */
  smsStaleSendingMs?: number;
  /** Rows per import transaction (default 1000). */
  leadImportBatchSize?: number;
  laneWakeIntervalMs?: number;
  /** How often a worker looks for running campaigns to join (default 1000 ms). */
  campaignPollMs?: number;
}

/**
 * BullMQ lock and stalled-check timings of the events queue. The lock is renewed while the
 * job runs (its first attempts included), so it can be short: the job of a worker that died
 * mid-fan-out is seen stalled and run again within about 20 s (lock expiry, then up to two
 * stalled checks), instead of a minute with BullMQ's 30 s defaults. (Deliveries need no such thing: their job
 * ids follow claim generations, so the reconciler re-adds them as soon as a claim lapses.)
 */
export const FAN_OUT_TIMINGS: Required<QueueTimings> = {
  lockDurationMs: 10_000,
  stalledIntervalMs: 5_000,
};

/** Pooled connections the delivery statements are prepared on at boot, and the wait. */
const PREPARED_CONNECTIONS = 4;
const PREPARE_WAIT_MS = 5_000;

export interface Runner {
  metricsPort: number | null;
  close(deadlineMs: number): Promise<'drained' | 'deadline'>;
}

/**
 * Starts every processor of the worker. Draining stops new work and waits for jobs in
 * flight; a job cut off by the deadline stays in BullMQ's active list and is recovered as
 * stalled by another worker, so nothing is lost.
 */
export async function startRunner(deps: WorkerDeps, opts: RunnerOptions = {}): Promise<Runner> {
  await probeRedis(deps.redis, deps.config.queuePrefix);
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
  // The delivery path's hot statements are batched per process and prepared before the
  // first job, on as many connections as the batches will use at once.
  const batches = createDeliveryBatches(deps.knex, deps.config.webhook.timeoutMs + CLAIM_MARGIN_MS);
  // Not fatal, and waited for at most PREPARE_WAIT_MS (Postgres may be away at boot): a
  // statement not prepared now is prepared on first use.
  const prepared = batches.lifecycle
    .prepare(deps.knex, PREPARED_CONNECTIONS)
    .catch((err: unknown) =>
      deps.logger.warn({ err }, 'could not prepare the delivery statements at boot'),
    );
  await Promise.race([prepared, new Promise((r) => setTimeout(r, PREPARE_WAIT_MS).unref())]);
  const attempt = attemptRunner(deps, batches);
  // Fan-out and first attempts: half as many event jobs as delivery jobs (an event job may
  // start many attempts), and at most `concurrency` first attempts in flight at once in this
  // process (the rest fall back to delivery jobs). Event jobs do not wait for them.
  const inline = new InlineAttempts(concurrency);
  const events = startQueueWorker(
    deps,
    'events',
    fanOutProcessor(deps, batches, lanes, attempt, inline),
    {
      lockDurationMs: opts.lockDurationMs ?? FAN_OUT_TIMINGS.lockDurationMs,
      stalledIntervalMs: opts.stalledIntervalMs ?? FAN_OUT_TIMINGS.stalledIntervalMs,
      concurrency: Math.max(2, Math.ceil(concurrency / 2)),
    },
  );
  const components: Component[] = [
    // The event worker first stops (no new inline attempts), then the running ones finish.
    { name: events.name, close: () => events.close().then(() => inline.drain()) },
    startQueueWorker(deps, 'deliveries', deliveryProcessor(deps, lanes, attempt), {
      ...opts,
      concurrency,
    }),
    // Wakes parked deliveries whose lane has room again: slots that expired (a worker died)
    // or wake-ups that were lost. Releases wake the next parked job at once otherwise.
    startTicker('lane-waker', opts.laneWakeIntervalMs ?? 1_000, deps.logger, () => lanes.wakeAll()),
    startRelay(deps),
    startReconciler(deps, batches.lifecycle, {
      intervalMs: opts.reconcileIntervalMs ?? 5_000,
      graceMs: opts.reconcileGraceMs ?? 15_000,
    }),
    startDialler(deps, opts),
    startProvisioning(deps, opts, {
      reconcileIntervalMs: opts.reconcileIntervalMs,
      reconcileGraceMs: opts.reconcileGraceMs,
      ...opts.provisioning,
    }),
    startSmsSender(deps, { ...opts, staleSendingMs: opts.smsStaleSendingMs }),
    startLeadImports(deps, {
      ...opts,
      batchSize: opts.leadImportBatchSize,
      // Imports make progress every batch; one without any for this long lost its job.
      reconcileGraceMs: opts.reconcileGraceMs === undefined ? undefined : opts.reconcileGraceMs * 2,
    }),
    startCampaigns(deps, { ...opts, pollMs: opts.campaignPollMs }),
  ];
  let server: Server | null = null;
  let dashboard: QueueDashboard | null = null;
  const metricsPort = opts.metricsPort === undefined ? deps.config.metricsPort : opts.metricsPort;
  if (metricsPort !== null) {
    // The queue dashboard shares the metrics port (README "Operator view of the queues").
    const token = deps.config.queueDashboard?.token;
    dashboard = token ? createQueueDashboard(deps.config, token) : null;
    const listen = { host: deps.config.metricsHost, port: metricsPort };
    server = await serveMetrics(
      deps.metrics.registry,
      listen,
      () => collectQueueDepths(deps.metrics, deps.queues),
      dashboard?.handle,
    );
  }
  deps.logger.info(
    {
      queuePrefix: deps.config.queuePrefix,
      concurrency,
      metricsHost: server ? deps.config.metricsHost : null,
      metricsPort: server ? (server.address() as { port: number }).port : null,
      queueDashboard: dashboard !== null,
    },
    'worker ready',
  );
  return {
    metricsPort: server ? (server.address() as { port: number }).port : null,
    async close(deadlineMs) {
      server?.close();
      const drained = Promise.all([...components.map((c) => c.close()), dashboard?.close()]).then(
        () => 'drained' as const,
      );
      const deadline = new Promise<'deadline'>((resolve) =>
        setTimeout(() => resolve('deadline'), deadlineMs).unref(),
      );
      return Promise.race([drained, deadline]);
    },
  };
}
