import { randomUUID } from 'node:crypto';
import { runMaintenance, type MaintenanceReport } from '@switchboard/db';
import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { startTicker } from '../ticker';

export interface MaintenanceTimings {
  /** How often a worker tries to run the job (default 10 minutes). */
  maintenanceIntervalMs?: number;
  /** The job's clock, for tests that set it forward. */
  maintenanceClock?: () => Date;
}

/** How long the lock holds if its worker dies mid-run; a run is bounded well below it. */
const LOCK_TTL_MS = 15 * 60_000;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/**
 * Runs the partition maintenance (making partitions ahead, retention) on one worker at a time:
 * a Redis lock (SET NX PX, released only by its owner) elects the worker whose tick runs it;
 * the others skip that tick. A failed run (Postgres or Redis away) is logged and the next
 * tick retries; deliveries and everything else go on meanwhile.
 */
export function startMaintenance(deps: WorkerDeps, opts: MaintenanceTimings = {}): Component {
  const key = `${deps.config.queuePrefix}:maintenance-lock`;
  return startTicker(
    'partition-maintenance',
    opts.maintenanceIntervalMs ?? 10 * 60_000,
    deps.logger,
    async () => {
      const report = await runLocked(deps, key, opts);
      if (report && (report.created.length || report.dropped.length || report.finished.length)) {
        deps.logger.info({ ...report }, 'partition maintenance');
      }
    },
  );
}

export async function runLocked(
  deps: WorkerDeps,
  key: string,
  opts: MaintenanceTimings = {},
): Promise<MaintenanceReport | undefined> {
  const token = randomUUID();
  const got = await deps.redis.set(key, token, 'PX', LOCK_TTL_MS, 'NX');
  if (got !== 'OK') return undefined;
  try {
    return await runMaintenance(deps, {
      deliveryRetentionDays: deps.config.deliveryRetentionDays,
      now: opts.maintenanceClock?.(),
    });
  } finally {
    await deps.redis.eval(RELEASE, 1, key, token).catch(() => undefined);
  }
}
