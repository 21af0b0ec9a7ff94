import { enqueue } from '@switchboard/queues';
import { applyHeldReceipt } from '@switchboard/sms';
import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { readdMissingJobs } from '../reconcile';
import { startTicker } from '../ticker';
import type { SmsOutcomeHooks } from './outcome-hooks';
import { failed } from './send';

export interface SmsReconcilerOptions {
  intervalMs: number;
  /** How long a message may stay queued before its job is presumed lost. */
  graceMs: number;
  /** How long a claimed message may stay `sending` before its sender is presumed dead. */
  staleSendingMs: number;
}

const BATCH = 500;

/**
 * Rows are the truth, jobs are hints. Each tick:
 * - scheduled messages that are due are released (→ queued, and their send job added), or
 *   cancelled (`recipient_opted_out`, with `sms.failed`) when the recipient opted out since;
 * - a message claimed (`sending`) longer than `staleSendingMs` ago belongs to a worker that
 *   died between the claim and recording the carrier's answer: it is failed as
 *   `send_interrupted`, never sent again (at most once wins over at least once: a customer
 *   must not get a text twice, and whether the carrier got it is unknown);
 * - a receipt held while its message's `sent` was committing is applied;
 * - a message still `queued` after the grace period gets its send job again if the job is
 *   missing (the API died or Redis was away between the commit and the add, or Redis lost
 *   the job). Re-adding with jobId = message id is a no-op while the job exists, and the
 *   claim makes any duplicate harmless.
 */
export function startSmsReconciler(
  deps: WorkerDeps,
  hooks: SmsOutcomeHooks,
  opts: SmsReconcilerOptions,
): Component {
  const { queues, stores, logger } = deps;
  const lifecycle = stores.smsLifecycle;

  async function release(): Promise<string[]> {
    const released = await deps.knex.transaction(async (trx) => {
      const due = await lifecycle.release(trx, BATCH);
      for (const sms of due) if (sms.status === 'cancelled') await failed(hooks, trx, sms);
      return due.filter((sms) => sms.status === 'queued').map((sms) => sms.id);
    });
    return released;
  }

  async function tick(): Promise<void> {
    const released = await release();
    if (released.length) {
      await enqueue(
        queues,
        'sms',
        released.map((smsId) => ({ data: { v: 1 as const, smsId } })),
      );
    }
    // One transaction: a campaign's message fails with its recipient counted (failed).
    const interrupted = await deps.knex.transaction(async (trx) => {
      const stale = await lifecycle.failInterrupted(trx, opts.staleSendingMs, BATCH);
      for (const sms of stale) await failed(hooks, trx, sms);
      return stale.map((sms) => sms.id);
    });
    if (interrupted.length) {
      logger.warn({ smsIds: interrupted }, 'SMS sends interrupted by a dead worker; failed');
    }
    await deps.knex.transaction(async (trx) => {
      for (const sms of await lifecycle.sentWithHeldReceipt(trx, BATCH)) {
        await applyHeldReceipt(trx, lifecycle, sms);
      }
    });
    const ids = await stores.sms.queuedOlderThan(opts.graceMs, BATCH);
    const jobs = ids.map((smsId) => ({ v: 1 as const, smsId }));
    const added = await readdMissingJobs(deps, 'sms', jobs, { freeStuck: true });
    if (added) logger.info({ messages: added }, 'SMS reconciler re-enqueued queued messages');
  }

  return startTicker('sms-reconciler', opts.intervalMs, logger, tick);
}
