import { Worker } from 'bullmq';
import { closeRedis, QUEUES } from '@switchboard/queues';
import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { dialProcessor } from './dial';
import type { TelephonyProvider } from './provider';
import { startDialReconciler } from './reconciler';
import { SimulatorProvider } from './simulator';

export type { DialRequest, TelephonyProvider, TelephonyReport } from './provider';
export { SimulatorProvider } from './simulator';

export interface DiallerOptions {
  reconcileIntervalMs?: number;
  reconcileGraceMs?: number;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Defaults to the simulator at SIMULATOR_SPEED. */
  provider?: TelephonyProvider;
}

/**
 * The outbound dialler: a worker on the outbound-calls queue driving a TelephonyProvider,
 * and the reconciler that re-enqueues queued calls whose job is missing. One component, so
 * the runner starts and drains it with a single line.
 */
export function startDialler(deps: WorkerDeps, opts: DiallerOptions = {}): Component {
  const provider = opts.provider ?? new SimulatorProvider(deps.config.simulatorSpeed);
  const connection = deps.redis.duplicate();
  const worker = new Worker(QUEUES.outboundCalls, dialProcessor(deps, provider), {
    connection,
    prefix: deps.config.queuePrefix,
    concurrency: deps.config.workerConcurrency,
    lockDuration: opts.lockDurationMs ?? 30_000,
    stalledInterval: opts.stalledIntervalMs ?? 30_000,
    maxStalledCount: 10,
  });
  worker.on('error', (err) => deps.logger.warn({ err }, 'dialler worker error'));
  worker.on('failed', (job, err) =>
    deps.logger.warn({ err, jobId: job?.id }, 'dial job failed; BullMQ will retry'),
  );
  const reconciler = startDialReconciler(deps, {
    intervalMs: opts.reconcileIntervalMs ?? 5_000,
    graceMs: opts.reconcileGraceMs ?? 15_000,
  });
  return {
    name: 'dialler',
    async close() {
      await Promise.all([worker.close(), reconciler.close()]);
      // BullMQ leaves a connection it was handed open; this one is the dialler's own.
      await closeRedis(connection);
      await provider.close();
    },
  };
}
