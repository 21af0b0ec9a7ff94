import { composite, type Component } from '../component';
import type { WorkerDeps } from '../deps';
import { reconcileTimings, type ReconcileOptions } from '../reconcile';
import { startQueueWorker, type QueueTimings } from '../queue-worker';
import { dialProcessor } from './dial';
import type { TelephonyProvider } from './provider';
import { startDialReconciler } from './reconciler';
import { SimulatorProvider } from './simulator';

export type { DialRequest, TelephonyProvider, TelephonyReport } from './provider';
export { SimulatorProvider } from './simulator';

export interface DiallerOptions extends QueueTimings, ReconcileOptions {
  /** Defaults to the simulator at SIMULATOR_SPEED. Test-mode calls always go to the simulator. */
  provider?: TelephonyProvider;
}

/**
 * The outbound dialler: a worker on the outbound-calls queue driving a TelephonyProvider,
 * and the reconciler that re-enqueues queued calls whose job is missing. One component, so
 * the runner starts and drains it with a single line.
 */
export function startDialler(deps: WorkerDeps, opts: DiallerOptions = {}): Component {
  const simulator = new SimulatorProvider(deps.config.simulatorSpeed);
  const provider = opts.provider ?? simulator;
  const worker = startQueueWorker(deps, 'outboundCalls', dialProcessor(deps, provider, simulator), {
    ...opts,
    concurrency: deps.config.workerConcurrency,
  });
  const reconciler = startDialReconciler(deps, reconcileTimings(opts));
  const providers = provider === simulator ? [provider] : [provider, simulator];
  return composite('dialler', [worker, reconciler], providers);
}
