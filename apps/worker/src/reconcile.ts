import type { Queue } from 'bullmq';
import { catalog, enqueue, type Catalog, type CatalogKey, type JobData } from '@switchboard/queues';
import type { WorkerDeps } from './deps';
import { freeStuckJobs } from './stuck-jobs';

/** The reconciler options every component takes (tests shorten them). */
export interface ReconcileOptions {
  reconcileIntervalMs?: number;
  reconcileGraceMs?: number;
}

/** A reconciler's tick interval and grace period: the options given, or 5 s and `graceMs`. */
export const reconcileTimings = (opts: ReconcileOptions, graceMs = 15_000) => ({
  intervalMs: opts.reconcileIntervalMs ?? 5_000,
  graceMs: opts.reconcileGraceMs ?? graceMs,
});

/**
 * What every reconciler does with the rows it found overdue (rows are the truth, jobs are
 * hints): adds again those of their jobs that the queue no longer holds. With `freeStuck`, a
 * job stuck in `active` without a lock (its worker died after taking it) is freed and added
 * again too. Job ids are deterministic, so re-adding a job that exists meanwhile is a no-op.
 * Returns how many jobs were added.
 */
export async function readdMissingJobs<K extends CatalogKey>(
  deps: WorkerDeps,
  key: K,
  jobs: ReadonlyArray<JobData<Catalog[K]>>,
  opts: { freeStuck: boolean },
): Promise<number> {
  if (jobs.length === 0) return 0;
  const queue = deps.queues[key] as unknown as Queue;
  const jobId = catalog[key].jobId as (data: JobData<Catalog[K]>) => string;
  const ids = jobs.map(jobId);
  const freed = opts.freeStuck ? await freeStuckJobs(deps.redis, queue, ids) : new Set<string>();
  const states = await Promise.all(ids.map((id) => queue.getJobState(id)));
  const missing = jobs.filter((_, i) => states[i] === 'unknown' || freed.has(ids[i] ?? ''));
  await enqueue(
    deps.queues,
    key,
    missing.map((data) => ({ data })),
  );
  return missing.length;
}
