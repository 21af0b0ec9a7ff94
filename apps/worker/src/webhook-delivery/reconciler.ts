import { catalog } from '@switchboard/queues';
import type { WorkerDeps } from '../deps';
import { startTicker } from '../ticker';
import { composite, type Component } from '../component';
import {
  PENDING_FLOOR_SWEEP_MS,
  sweepPendingFloor,
  type DeliveryLifecycle,
  type OpenDelivery,
} from '@switchboard/db';
import { freeStuckJobs } from '../stuck-jobs';
import { deliveryJob, enqueueDeliveries } from './enqueue-deliveries';

export interface ReconcilerOptions {
  intervalMs: number;
  /** How overdue a row must be before it is considered lost (covers normal latency). */
  graceMs: number;
  /** How often lapsed claims are looked for (default LAPSE_CHECK_MS). */
  lapseCheckMs?: number;
  /** How often the pending floors are swept (default PENDING_FLOOR_SWEEP_MS). */
  floorSweepMs?: number;
}

/**
 * Lapsed claims are looked for twice a second: an attempt in flight at a worker's death runs
 * again at most this long after its claim lapses (WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS after
 * the claim), so WEBHOOK_TIMEOUT_MS + 3.5 s after the death plus the time to take the job and
 * send: within WEBHOOK_TIMEOUT_MS + 5 s with 1.5 s to spare for a loaded machine
 * (docs/RELIABILITY.md, "Crash recovery, timer by timer"). The query reads an index of the
 * rows being delivered only (migration 013), a few rows.
 */
export const LAPSE_CHECK_MS = 500;

const BATCH = 500;

/**
 * The safety net that makes a lost job harmless: rows are the truth, jobs are hints.
 * - events a version before migration 098 left pending (during an upgrade) are moved into the
 *   outbox after the grace period (an event's fan-out and its deliveries commit together);
 * - open deliveries whose next attempt is overdue, and whose claim (if any) has lapsed, get
 *   their attempt job again.
 * Deterministic job ids make every re-add a no-op while the original job still exists, and
 * the delivery claim makes a duplicate job for the same attempt do nothing.
 *
 * It also sweeps the pending floors of events and deliveries every minute, which bound its
 * own scans, the lapse check and the relay's to the days that can hold pending rows
 * (packages/db/src/partitions/pending-floors.ts).
 */
export function startReconciler(
  deps: WorkerDeps,
  lifecycle: DeliveryLifecycle,
  opts: ReconcilerOptions,
): Component {
  const { queues, stores, logger, knex } = deps;
  async function tick(): Promise<void> {
    const events = await stores.events.adoptLegacy(opts.graceMs, BATCH);
    const overdue = await lifecycle.overdue(knex, opts.graceMs, BATCH);
    await readd(overdue);
    if (events || overdue.length) {
      logger.info({ events, deliveries: overdue.length }, 'reconciler re-enqueued work');
    }
  }

  /**
   * Adds each delivery's job again; a job stuck in `active` without a lock (its worker died
   * while it ran: an attempt claimed and maybe sent) is freed first, or
   * the add would be a no-op until BullMQ's stalled check. The jobs this adds are marked
   * recovered: each stands for a job lost or freed, whose attempt may have been in flight,
   * and goes before its lanes' backlogs, as the job of a lapsed claim does. A job that still
   * exists (a live worker runs it, or it waits) is left as it is.
   */
  async function readd(deliveries: readonly OpenDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const ids = deliveries.map((d) => catalog.deliveries.jobId(deliveryJob(d)));
    const freed = await freeStuckJobs(deps.redis, queues.deliveries, ids);
    if (freed.size) logger.warn({ jobs: [...freed] }, 'freed delivery jobs of a dead worker');
    await enqueueDeliveries(deps, deliveries, { recovered: true });
  }

  async function lapsed(): Promise<void> {
    const rows = await lifecycle.lapsed(knex, BATCH);
    await readd(rows);
    if (rows.length) logger.info({ deliveries: rows.length }, 'lapsed claims re-enqueued');
  }

  async function sweepFloors(): Promise<void> {
    await sweepPendingFloor(knex, 'events');
    await sweepPendingFloor(knex, 'webhook_deliveries');
  }

  const main = startTicker('reconciler', opts.intervalMs, logger, tick);
  const lapse = startTicker('claim-lapse', opts.lapseCheckMs ?? LAPSE_CHECK_MS, logger, lapsed);
  const floors = startTicker(
    'pending-floors',
    opts.floorSweepMs ?? PENDING_FLOOR_SWEEP_MS,
    logger,
    sweepFloors,
  );
  return composite('reconciler', [main, lapse, floors]);
}
