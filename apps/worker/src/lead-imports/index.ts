import { composite, type Component } from '../component';
import type { WorkerDeps } from '../deps';
import { reconcileTimings, type ReconcileOptions } from '../reconcile';
import { startQueueWorker, type QueueTimings } from '../queue-worker';
import { leadImportProcessor } from './processor';
import { startImportReconciler } from './reconciler';

export interface LeadImportsOptions extends QueueTimings, ReconcileOptions {
  /** Rows per transaction (tests use small batches to crash mid-file). */
  batchSize?: number;
}

/**
 * CSV lead imports: a worker on the lead-imports queue (two files at a time per process:
 * each one is a long, Postgres-bound job) and the reconciler that re-adds lost jobs.
 */
export function startLeadImports(deps: WorkerDeps, opts: LeadImportsOptions = {}): Component {
  const worker = startQueueWorker(deps, 'leadImports', leadImportProcessor(deps, opts.batchSize), {
    ...opts,
    concurrency: 2,
  });
  const reconciler = startImportReconciler(deps, reconcileTimings(opts, 60_000));
  return composite('lead-imports', [worker, reconciler]);
}
