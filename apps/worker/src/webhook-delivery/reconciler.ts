import { enqueue } from '@switchboard/queues';
import type { WorkerDeps } from '../deps';
import { startTicker } from '../ticker';
import type { Component } from '../component';
import type { DeliveryLifecycle } from '@switchboard/db';
import { enqueueDeliveries } from './enqueue-deliveries';

export interface ReconcilerOptions {
  intervalMs: number;
  /** How overdue a row must be before it is considered lost (covers normal latency). */
  graceMs: number;
}

const BATCH = 500;

/**
 * The safety net that makes a lost job harmless: rows are the truth, jobs are hints.
 * - events not yet fanned out after the grace period are published again (the relay may have
 *   died between publish and fan-out, or Redis may have lost the job in a failover);
 * - open deliveries whose next attempt is overdue, and whose claim (if any) has lapsed, get
 *   their attempt job again.
 * Deterministic job ids make every re-add a no-op while the original job still exists, and
 * the delivery claim makes a duplicate job for the same attempt do nothing.
 */
export function startReconciler(
  deps: WorkerDeps,
  lifecycle: DeliveryLifecycle,
  opts: ReconcilerOptions,
): Component {
  const { queues, stores, logger, knex } = deps;
  async function tick(): Promise<void> {
    const events = await stores.events.notFannedOut(opts.graceMs, BATCH);
    await enqueue(
      queues,
      'events',
      events.map((eventId) => ({ data: { v: 1 as const, eventId } })),
    );
    const overdue = await lifecycle.overdue(knex, opts.graceMs, BATCH);
    await enqueueDeliveries(deps, overdue);
    if (events.length || overdue.length) {
      logger.info(
        { events: events.length, deliveries: overdue.length },
        'reconciler re-enqueued work',
      );
    }
  }

  return startTicker('reconciler', opts.intervalMs, logger, tick);
}
