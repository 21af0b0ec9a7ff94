import { createLogger } from '@switchboard/logger';
import { createWorkerDeps, type WorkerDeps } from '../../apps/worker/src/deps';
import type { TestContext } from './context';

/**
 * A worker's dependencies on `config` (connections, stores, metrics) with no component
 * started, logging nothing: for a test that drives the worker's parts itself. Apart from
 * ./worker.ts, which loads the whole worker.
 */
export const quietWorkerDeps = (config: TestContext['config']): WorkerDeps =>
  createWorkerDeps(config, { logger: createLogger('worker', 'silent') });
