import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { readdMissingJobs } from '../reconcile';
import { startTicker } from '../ticker';

export interface ImportReconcilerOptions {
  intervalMs: number;
  /** How long an import may go without a committed batch before its job is presumed lost. */
  graceMs: number;
  /** Staged uploads older than this were abandoned by a dead API process. */
  abandonedUploadMs?: number;
}

const BATCH = 100;

/**
 * Rows are the truth, jobs are hints: an import still `processing` without progress for the
 * grace period gets its job again when the job is missing (the API died or Redis was away
 * between the commit and the add, or Redis lost the job). Re-adding with jobId = import id is
 * a no-op while the job exists, and a resumed run starts after the last committed batch.
 * Uploads that never became imports are deleted with their chunks.
 */
export function startImportReconciler(deps: WorkerDeps, opts: ImportReconcilerOptions): Component {
  const { logger } = deps;
  const imports = deps.stores.leadImports;
  async function tick(): Promise<void> {
    await deps.stores.leadImportLifecycle.deleteAbandonedUploads(
      deps.knex,
      opts.abandonedUploadMs ?? 3_600_000,
    );
    const ids = await imports.stalled(opts.graceMs, BATCH);
    const jobs = ids.map((importId) => ({ v: 1 as const, importId }));
    const added = await readdMissingJobs(deps, 'leadImports', jobs, { freeStuck: true });
    if (added) logger.info({ imports: added }, 'import reconciler re-enqueued stalled imports');
  }
  return startTicker('import-reconciler', opts.intervalMs, logger, tick);
}
