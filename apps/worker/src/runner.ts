import type { Server } from 'node:http';
import { probeRedis } from '@switchboard/queues';
import { serveMetrics } from '@switchboard/telemetry';
import { startCampaigns } from './campaigns';
import type { Component } from './component';
import type { QueueDashboard } from './dashboard';
import type { WorkerDeps } from './deps';
import { startDialler, type TelephonyProvider } from './dialler';
import { startLeadImports } from './lead-imports';
import { startMaintenance, type MaintenanceTimings } from './maintenance';
import { collectOutboxLag, collectQueueDepths } from './metrics';
import { startProvisioning, type ProvisioningOptions } from './provisioning';
import { startSmsSender, type SimulatorSmsOptions, type SmsProvider } from './sms';
import { startTestDataDeletions } from './test-data';
import { startWebhookDelivery, type WebhookDeliveryOptions } from './webhook-delivery';

/** Every part's options; webhook delivery's (lane waker, first-attempt lease) as its own. */
export interface RunnerOptions extends WebhookDeliveryOptions, MaintenanceTimings {
  /** Port of /metrics; 0 picks a free one, null serves none. */
  metricsPort?: number | null;
  /** Provider, lease and retry timings of receptionist provisioning (tests). */
  provisioning?: ProvisioningOptions;
  /** How long an SMS may stay claimed before it is failed as `send_interrupted` (120 s). */
  smsStaleSendingMs?: number;
  /** Options of the SMS simulator (tests: a fixed receipt delay). */
  smsSimulator?: SimulatorSmsOptions;
  /** Rows per import transaction (default 1000). */
  leadImportBatchSize?: number;
  /** How often a worker looks for running campaigns to join (default 1000 ms). */
  campaignPollMs?: number;
  /** The outbound dialler's provider for live calls (default: the simulator). */
  telephonyProvider?: TelephonyProvider;
  /** The SMS carrier for live messages (default: the simulator). */
  smsProvider?: SmsProvider;
}

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
  const sms = startSmsSender(deps, {
    ...opts,
    staleSendingMs: opts.smsStaleSendingMs,
    simulator: opts.smsSimulator,
    provider: opts.smsProvider,
  });
  // Every component closes side by side (close() below). The campaigns' pump starts
  // in-process sends: once the SMS sender's close began it refuses them, and the message
  // goes to its job (./sms/index.ts).
  const components: Component[] = [
    startCampaigns(deps, sms, { ...opts, pollMs: opts.campaignPollMs }),
    await startWebhookDelivery(deps, opts),
    startDialler(deps, { ...opts, provider: opts.telephonyProvider }),
    startProvisioning(deps, opts, {
      reconcileIntervalMs: opts.reconcileIntervalMs,
      reconcileGraceMs: opts.reconcileGraceMs,
      ...opts.provisioning,
    }),
    sms,
    startLeadImports(deps, {
      ...opts,
      batchSize: opts.leadImportBatchSize,
      // Imports make progress every batch; one without any for this long lost its job.
      reconcileGraceMs: opts.reconcileGraceMs === undefined ? undefined : opts.reconcileGraceMs * 2,
    }),
    startTestDataDeletions(deps, opts),
    startMaintenance(deps, opts),
  ];
  let server: Server | null = null;
  let dashboard: QueueDashboard | null = null;
  const metricsPort = opts.metricsPort === undefined ? deps.config.metricsPort : opts.metricsPort;
  if (metricsPort !== null) {
    // The queue dashboard shares the metrics port (docs/OPERATIONS.md, "Operator view of the
    // queues"). Loaded only when it is on: bull-board and express were a fifth of a worker's
    // CPU to ready (decision 0135).
    const token = deps.config.queueDashboard?.token;
    dashboard = token
      ? (await import('./dashboard')).createQueueDashboard(deps.config, token)
      : null;
    const listen = { host: deps.config.metricsHost, port: metricsPort };
    server = await serveMetrics(
      deps.metrics.registry,
      listen,
      async () => {
        await Promise.allSettled([
          collectQueueDepths(deps.metrics, deps.queues),
          collectOutboxLag(deps.metrics, deps.knex),
        ]);
      },
      dashboard?.handle,
    );
  }
  deps.logger.info(
    {
      queuePrefix: deps.config.queuePrefix,
      concurrency: deps.config.workerConcurrency,
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
