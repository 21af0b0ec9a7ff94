import { jobIds } from '@switchboard/queues';
import type { Component } from '../component';
import type { WorkerDeps } from '../deps';

export interface DialReconcilerOptions {
  intervalMs: number;
  /** How long a call may stay queued before its job is presumed lost. */
  graceMs: number;
}

const BATCH = 500;

/**
 * Rows are the truth, jobs are hints: an outbound call still `queued` after the grace period
 * gets its dial job again if the job is missing (the API died or Redis was away between the
 * commit and the add, or Redis lost the job). Re-adding with jobId = call id is a no-op while
 * the job exists, and the dialler's claim makes any duplicate harmless.
 */
export function startDialReconciler(deps: WorkerDeps, opts: DialReconcilerOptions): Component {
  const { queues, stores, logger } = deps;
  let stopped = false;
  let running: Promise<void> | null = null;

  async function tick(): Promise<void> {
    const ids = await stores.calls.queuedOutbound(opts.graceMs, BATCH);
    if (ids.length === 0) return;
    const states = await Promise.all(ids.map((id) => queues.outboundCalls.getJobState(id)));
    const missing = ids.filter((_, i) => states[i] === 'unknown');
    if (missing.length === 0) return;
    await queues.outboundCalls.addBulk(
      missing.map((callId) => ({
        name: 'dial',
        data: { v: 1 as const, callId },
        opts: { jobId: jobIds.outboundCall(callId) },
      })),
    );
    logger.info({ calls: missing.length }, 'dial reconciler re-enqueued queued calls');
  }

  const timer = setInterval(() => {
    if (stopped || running) return;
    running = tick()
      .catch((err: unknown) => logger.warn({ err }, 'dial reconciler tick failed'))
      .finally(() => {
        running = null;
      });
  }, opts.intervalMs);

  return {
    name: 'dial-reconciler',
    async close() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
