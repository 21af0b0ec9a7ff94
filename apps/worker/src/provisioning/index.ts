import { composite, type Component } from '../component';
import type { WorkerDeps } from '../deps';
import { reconcileTimings, type ReconcileOptions } from '../reconcile';
import { startQueueWorker, type QueueTimings } from '../queue-worker';
import { ProvisioningTransitions } from './transitions';
import { provisionProcessor, type ProvisioningPolicy } from './provision';
import type { ProvisioningProvider } from './provider';
import { startProvisioningReconciler } from './reconciler';
import { SimulatorProvisioningProvider } from './simulator';

export { ProvisioningError } from './provider';
export type { AssistantRequest, NumberRequest, ProvisioningProvider } from './provider';
export { SimulatorProvisioningProvider, simulatedNumber } from './simulator';

export interface ProvisioningOptions extends Partial<ProvisioningPolicy>, ReconcileOptions {
  /** Defaults to the simulator at SIMULATOR_SPEED. */
  provider?: ProvisioningProvider;
}

const DEFAULT_POLICY: ProvisioningPolicy = {
  leaseMs: 120_000,
  retryBackoffMs: [2_000, 10_000],
};

/**
 * Receptionist provisioning: a worker on the provisioning queue driving a
 * ProvisioningProvider, and the reconciler that brings back forgotten or abandoned
 * receptionists. One component, started and drained by the runner with a single line.
 */
export function startProvisioning(
  deps: WorkerDeps,
  timings: QueueTimings,
  opts: ProvisioningOptions = {},
): Component {
  const provider = opts.provider ?? new SimulatorProvisioningProvider(deps.config.simulatorSpeed);
  const transitions = new ProvisioningTransitions(deps.knex, deps.stores.provisioningLifecycle);
  const policy: ProvisioningPolicy = {
    leaseMs: opts.leaseMs ?? DEFAULT_POLICY.leaseMs,
    retryBackoffMs: opts.retryBackoffMs ?? DEFAULT_POLICY.retryBackoffMs,
  };
  const worker = startQueueWorker(
    deps,
    'provisioning',
    provisionProcessor(deps, provider, transitions, policy),
    { ...timings, concurrency: Math.max(2, Math.ceil(deps.config.workerConcurrency / 4)) },
  );
  const reconciler = startProvisioningReconciler(deps, transitions, reconcileTimings(opts));
  return composite('provisioning', [worker, reconciler], [provider]);
}
