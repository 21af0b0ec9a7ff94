import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { startQueueWorker, type QueueTimings } from '../queue-worker';
import type { SmsProvider } from './provider';
import { startSmsReconciler } from './reconciler';
import { sendProcessor } from './send';
import { SimulatorSmsProvider } from './simulator';

export type { SmsProvider, SmsRequest, SmsSendResult } from './provider';
export { SimulatorSmsProvider, simulatorHandoffs } from './simulator';

export interface SmsSenderOptions extends QueueTimings {
  reconcileIntervalMs?: number;
  reconcileGraceMs?: number;
  /** How long a message may stay claimed (`sending`) before it is failed as interrupted. */
  staleSendingMs?: number;
  /** Defaults to the simulator at SIMULATOR_SPEED. */
  provider?: SmsProvider;
}

/**
 * The SMS sender: a worker on the sms queue driving an SmsProvider, and the reconciler that
 * re-enqueues queued messages whose job is missing and fails sends a dead worker left
 * behind. One component, so the runner starts and drains it with a single line.
 */
export function startSmsSender(deps: WorkerDeps, opts: SmsSenderOptions = {}): Component {
  const provider =
    opts.provider ??
    new SimulatorSmsProvider(deps.config.simulatorSpeed, deps.redis, deps.config.queuePrefix);
  const staleSendingMs = opts.staleSendingMs ?? 120_000;
  const worker = startQueueWorker(deps, 'sms', sendProcessor(deps, provider, { staleSendingMs }), {
    ...opts,
    concurrency: deps.config.workerConcurrency,
  });
  const reconciler = startSmsReconciler(deps, {
    intervalMs: opts.reconcileIntervalMs ?? 5_000,
    graceMs: opts.reconcileGraceMs ?? 15_000,
    staleSendingMs,
  });
  return {
    name: 'sms',
    async close() {
      await Promise.all([worker.close(), reconciler.close()]);
      await provider.close();
    },
  };
}
