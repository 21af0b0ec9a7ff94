import { emit } from '@switchboard/events';
import type { TestDataDeletionJob } from '@switchboard/queues';
import { composite, type Component } from '../component';
import type { WorkerDeps } from '../deps';
import { readdMissingJobs, reconcileTimings, type ReconcileOptions } from '../reconcile';
import { startQueueWorker, type QueueTimings } from '../queue-worker';
import { startTicker } from '../ticker';

export type TestDataOptions = QueueTimings & ReconcileOptions;

const BATCH = 100;

/**
 * One wipe (jobId = deletion id): in one transaction, the running deletion is locked, the
 * tenant's test-mode data removed (TestDataDeletionLifecycle.wipe), the deletion completed
 * and `test_data.deleted` emitted (a test-mode event). A duplicate or re-run job finds the
 * deletion completed and does nothing; a crash before the commit leaves it running for the
 * job's retry or the reconciler.
 */
export function testDataDeletionProcessor(deps: WorkerDeps) {
  const deletions = deps.stores.testDataDeletions;
  return async (data: TestDataDeletionJob): Promise<void> => {
    await deps.knex.transaction(async (trx) => {
      const deletion = await deletions.lockRunning(trx, data.deletionId);
      if (!deletion) return; // gone or done
      const wiped = await deletions.wipe(trx, deletion);
      const completedAt = await deletions.complete(trx, deletion.id);
      await emit(trx, {
        tenantId: deletion.tenantId,
        livemode: false,
        type: 'test_data.deleted',
        data: {
          deletion_id: deletion.id,
          calls_deleted: wiped.calls,
          events_deleted: wiped.events,
          deliveries_deleted: wiped.deliveries,
          sms_deleted: wiped.sms,
          leads_deleted: wiped.leads,
          campaigns_deleted: wiped.campaigns,
          requested_at: deletion.createdAt.toISOString(),
          completed_at: completedAt.toISOString(),
        },
      });
      deps.logger.info({ tenant_id: deletion.tenantId, ...wiped }, 'test data wiped');
    });
  };
}

/**
 * Wipes of test-mode data (docs/API.md, Test mode): a worker on the test-data-deletions
 * queue and a reconciler that re-adds the job of a deletion still running after the grace
 * period (the API died or Redis was away between the commit and the add).
 */
export function startTestDataDeletions(deps: WorkerDeps, opts: TestDataOptions = {}): Component {
  const worker = startQueueWorker(deps, 'testDataDeletions', testDataDeletionProcessor(deps), {
    ...opts,
    concurrency: 1,
  });
  const timings = reconcileTimings(opts);
  const reconciler = startTicker(
    'test-data-reconciler',
    timings.intervalMs,
    deps.logger,
    async () => {
      const ids = await deps.stores.testDataDeletions.stalled(timings.graceMs, BATCH);
      const jobs = ids.map((deletionId) => ({ v: 1 as const, deletionId }));
      const added = await readdMissingJobs(deps, 'testDataDeletions', jobs, { freeStuck: true });
      if (added)
        deps.logger.info({ deletions: added }, 'test data reconciler re-enqueued deletions');
    },
  );
  return composite('test-data', [worker, reconciler]);
}
