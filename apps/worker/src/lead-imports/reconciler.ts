import { catalog, enqueue } from '@switchboard/queues';
import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { startTicker } from '../ticker';
import { freeStuckJobs } from '../stuck-jobs';

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
  const { queues, logger } = deps;
  const imports = deps.stores.leadImports;
  async function tick(): Promise<void> {
    await imports.deleteAbandonedUploads(opts.abandonedUploadMs ?? 3_600_000);
    const ids = await imports.stalled(opts.graceMs, BATCH);
    if (ids.length === 0) return;
    const jobs = ids.map((importId) => ({ v: 1 as const, importId }));
    // A job stuck in `active` without a lock (its worker died) is freed and added again.
    const freed = await freeStuckJobs(
      deps.redis,
      queues.leadImports,
      jobs.map((d) => catalog.leadImports.jobId(d)),
    );
    const states = await Promise.all(
      jobs.map((d) => queues.leadImports.getJobState(catalog.leadImports.jobId(d))),
    );
    const missing = jobs.filter(
      (d, i) => states[i] === 'unknown' || freed.has(catalog.leadImports.jobId(d)),
    );
    if (missing.length === 0) return;
    await enqueue(
      queues,
      'leadImports',
      missing.map((data) => ({ data })),
    );
    logger.info({ imports: missing.length }, 'import reconciler re-enqueued stalled imports');
  }
  return startTicker('import-reconciler', opts.intervalMs, logger, tick);
}
