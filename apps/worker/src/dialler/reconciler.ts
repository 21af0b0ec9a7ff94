import { applyTelephonyMessage } from '@switchboard/telephony';
import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { readdMissingJobs } from '../reconcile';
import { startTicker } from '../ticker';
import { requestOf } from './dial';
import { notConnectedMessage } from './messages';

export interface DialReconcilerOptions {
  intervalMs: number;
  /** How long a call may stay queued before its job is presumed lost. */
  graceMs: number;
  /** How long a claimed call may stay `ringing` / `in_progress` before it is failed. */
  staleRingingMs?: number;
  staleInProgressMs?: number;
}

const BATCH = 500;

/**
 * Rows are the truth, jobs are hints: an outbound call still `queued` after the grace period
 * gets its dial job again if the job is missing (the API died or Redis was away between the
 * commit and the add, or Redis lost the job). Re-adding with jobId = call id is a no-op while
 * the job exists, and the dialler's claim makes any duplicate harmless.
 */
export function startDialReconciler(deps: WorkerDeps, opts: DialReconcilerOptions): Component {
  const { stores, logger } = deps;
  /**
   * A claimed call is never dialled again (at most once), so one whose worker died mid-call
   * would stay ringing or in progress for ever: it is ended as failed instead, through the
   * ingestion path (status, call.completed event). The message id is derived from the call,
   * so two workers sweeping the same call apply it once.
   */
  async function sweepStale(): Promise<void> {
    const stale = await stores.calls.staleOutbound(
      opts.staleRingingMs ?? 120_000,
      opts.staleInProgressMs ?? 4 * 3_600_000,
      BATCH,
    );
    for (const id of stale) {
      const call = await stores.calls.findById(deps.knex, id);
      if (!call?.providerCallId) continue;
      const message = notConnectedMessage(
        requestOf(call, call.providerCallId),
        'error',
        new Date(),
      );
      // One attempt per tick: a failed one is simply tried again by the next tick.
      await applyTelephonyMessage(deps, { ...message, id: `sweep_${call.id}_${call.status}` });
      logger.warn({ callId: id, status: call.status }, 'outbound call stopped progressing; failed');
    }
  }

  async function tick(): Promise<void> {
    await sweepStale();
    const ids = await stores.calls.queuedOutbound(opts.graceMs, BATCH);
    const jobs = ids.map((callId) => ({ v: 1 as const, callId }));
    const added = await readdMissingJobs(deps, 'outboundCalls', jobs, { freeStuck: false });
    if (added) logger.info({ calls: added }, 'dial reconciler re-enqueued queued calls');
  }

  return startTicker('dial-reconciler', opts.intervalMs, logger, tick);
}
