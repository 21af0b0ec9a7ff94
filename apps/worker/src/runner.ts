import type { Server } from 'node:http';
import { QUEUES } from '@switchboard/queues';
import type { Component } from './component';
import type { WorkerDeps } from './deps';
import { startDialler } from './dialler';
import { serveMetrics } from './metrics';
import { startQueueWorker, type QueueTimings } from './queue-worker';
import { deliveryProcessor } from './processors/deliver';
import { fanOutProcessor } from './processors/fan-out';
import { startReconciler } from './processors/reconciler';
import { startRelay } from './processors/relay';

export interface RunnerOptions extends QueueTimings {
  /** Port of /metrics; 0 picks a free one, null serves none. */
  metricsPort?: number | null;
  reconcileIntervalMs?: number;
  reconcileGraceMs?: number;
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
  await deps.redis.ping();
  const concurrency = deps.config.workerConcurrency;
  const components: Component[] = [
    startQueueWorker(
      deps,
      QUEUES.events,
      Math.max(2, Math.ceil(concurrency / 2)),
      opts,
      fanOutProcessor(deps),
    ),
    startQueueWorker(deps, QUEUES.deliveries, concurrency, opts, deliveryProcessor(deps)),
    startRelay(deps),
    startReconciler(deps, {
      intervalMs: opts.reconcileIntervalMs ?? 5_000,
      graceMs: opts.reconcileGraceMs ?? 15_000,
    }),
    startDialler(deps, opts),
  ];
  let server: Server | null = null;
  const metricsPort = opts.metricsPort === undefined ? deps.config.metricsPort : opts.metricsPort;
  if (metricsPort !== null) {
    server = await serveMetrics(deps.metrics, metricsPort, async () => {
      for (const [name, queue] of Object.entries({
        events: deps.queues.events,
        deliveries: deps.queues.deliveries,
      })) {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
        for (const [state, n] of Object.entries(counts))
          deps.metrics.queueDepth.set({ queue: name, state }, n);
      }
    });
  }
  deps.logger.info(
    {
      queuePrefix: deps.config.queuePrefix,
      concurrency,
      metricsPort: server ? (server.address() as { port: number }).port : null,
    },
    'worker ready',
  );
  return {
    metricsPort: server ? (server.address() as { port: number }).port : null,
    async close(deadlineMs) {
      server?.close();
      const drained = Promise.all(components.map((c) => c.close())).then(() => 'drained' as const);
      const deadline = new Promise<'deadline'>((resolve) =>
        setTimeout(() => resolve('deadline'), deadlineMs).unref(),
      );
      return Promise.race([drained, deadline]);
    },
  };
}
