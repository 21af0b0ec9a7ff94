import { PROVISIONING_MAX_ATTEMPTS } from '@switchboard/db';
import type { ProvisioningJob } from '@switchboard/queues';
import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { readdMissingJobs } from '../reconcile';
import { startTicker } from '../ticker';
import type { ProvisioningTransitions } from './transitions';

export interface ProvisioningReconcilerOptions {
  intervalMs: number;
  /** How long past its due time a receptionist may sit before it is presumed forgotten. */
  graceMs: number;
}

const BATCH = 200;

/**
 * Rows are the truth, jobs are hints: a receptionist still `provisioning` whose next attempt
 * is overdue by the grace period (the API died or Redis was away between the commit and the
 * add, Redis lost the job, or the worker running the attempt died and its claim lapsed) gets
 * the job of its next attempt again. An attempt whose worker died counts as spent, so the
 * third one dying ends the round in `error` instead of looping for ever. Deterministic job
 * ids and the claim make a re-add by several workers at once harmless.
 */
export function startProvisioningReconciler(
  deps: WorkerDeps,
  transitions: ProvisioningTransitions,
  opts: ProvisioningReconcilerOptions,
): Component {
  const { knex, stores, logger } = deps;

  async function tick(): Promise<void> {
    const overdue = await stores.provisioningLifecycle.overdue(knex, opts.graceMs, BATCH);
    const jobs: ProvisioningJob[] = [];
    for (const r of overdue) {
      if (r.attempts < PROVISIONING_MAX_ATTEMPTS) {
        jobs.push({ v: 1, receptionistId: r.id, round: r.round, attempt: r.attempts + 1 });
        continue;
      }
      const failed = await transitions.fail(
        { id: r.id, round: r.round, attempt: r.attempts, onlyIfLapsed: true },
        {
          code: 'provisioning_failed',
          message: `Provisioning did not complete in ${PROVISIONING_MAX_ATTEMPTS} attempts`,
        },
      );
      if (failed) logger.warn({ receptionistId: r.id }, 'provisioning attempts spent; error');
    }
    const added = await readdMissingJobs(deps, 'provisioning', jobs, { freeStuck: false });
    if (added)
      logger.info({ receptionists: added }, 'provisioning reconciler re-enqueued attempts');
  }

  return startTicker('provisioning-reconciler', opts.intervalMs, logger, tick);
}
