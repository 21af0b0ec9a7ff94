import type { Db } from '../stores/create-stores';
import { ensureAhead } from './catalog';
import { dropBefore, finishDetached } from './drop';
import {
  clearIdempotencyKeys,
  deleteCallHistory,
  deleteDeliveryHistory,
  type RowRetentionLimits,
} from './row-retention';
import { floorTo, PARTITIONED_TABLES, shift } from './spec';

export interface MaintenanceOptions {
  /** The deployment's DELIVERY_RETENTION_DAYS. */
  deliveryRetentionDays: number;
  /** The job's clock (tests set it forward); the earlier of it and Postgres' clock is used. */
  now?: Date;
  /** How long a DDL statement may wait for a busy table before the run gives it up. */
  lockTimeoutMs?: number;
  limits?: RowRetentionLimits;
}

export interface MaintenanceReport {
  created: string[];
  dropped: string[];
  /** Partitions a crashed run had detached and this one dropped. */
  finished: string[];
  rowsDeleted: number;
  idempotencyKeysCleared: number;
}

const DAY_MS = 86_400_000;

/**
 * One maintenance run (docs/decisions/0059-retention-and-maintenance.md); the caller makes sure
 * one runs at a time across workers. In order: finish what a crashed run detached, make the
 * partitions ahead, drop the delivery-history days that every tenant's retention is past,
 * delete row by row what a shorter retention of a tenant sharing a kept partition is past,
 * a tenant's call and SMS history past its `--calls-days`, and idempotency keys past 24 h.
 *
 * Safety: "now" is the earlier of the job's clock and Postgres' clock, and only ranges that
 * end at or before (start of today − retention) are dropped, so with either clock set
 * forward the current and future partitions are never dropped. Every step is idempotent: a
 * run that fails part-way (Postgres away, a lock not granted) is completed by the next.
 */
export async function runMaintenance(
  { knex, stores }: Db,
  opts: MaintenanceOptions,
): Promise<MaintenanceReport> {
  const lockTimeoutMs = opts.lockTimeoutMs ?? 2_000;
  const limits = opts.limits ?? { batch: 5_000, maxBatches: 40 };
  const { rows } = (await knex.raw('SELECT now() AS now')) as { rows: { now: Date }[] };
  const dbNow = rows[0]?.now ?? new Date();
  const jobNow = opts.now ?? new Date();
  const now = jobNow < dbNow ? jobNow : dbNow;
  const today = floorTo(now, 'day');

  const own = await stores.tenantRetention.listSet();
  const withDelivery = own.filter((r) => r.deliveryDays !== null);
  const keepDays = Math.max(
    opts.deliveryRetentionDays,
    ...withDelivery.map((r) => r.deliveryDays ?? 0),
  );
  const dropCutoff = shift(today, 'day', -keepDays);

  const report: MaintenanceReport = {
    created: [],
    dropped: [],
    finished: [],
    rowsDeleted: 0,
    idempotencyKeysCleared: 0,
  };
  for (const t of PARTITIONED_TABLES) {
    if (t.deliveryHistory) report.finished.push(...(await finishDetached(knex, t, dropCutoff)));
    report.created.push(...(await ensureAhead(knex, t, now, lockTimeoutMs)));
    if (t.deliveryHistory) {
      report.dropped.push(...(await dropBefore(knex, t, dropCutoff, lockTimeoutMs)));
    }
  }

  // Rows the dropped partitions did not take: only where tenants with different retentions
  // share a kept day. With every tenant on the default, whole days are the granularity (a
  // row is kept at most one day longer than the retention) and nothing is scanned.
  const cutoffOf = (days: number) => new Date(now.getTime() - days * DAY_MS);
  for (const r of withDelivery) {
    if ((r.deliveryDays ?? keepDays) >= keepDays) continue;
    const cutoff = cutoffOf(r.deliveryDays ?? keepDays);
    report.rowsDeleted += await deleteDeliveryHistory(
      knex,
      { tenantId: r.tenantId },
      cutoff,
      limits,
    );
  }
  if (keepDays > opts.deliveryRetentionDays) {
    report.rowsDeleted += await deleteDeliveryHistory(
      knex,
      { except: withDelivery.map((r) => r.tenantId) },
      cutoffOf(opts.deliveryRetentionDays),
      limits,
    );
  }
  for (const r of own) {
    if (r.callsDays === null) continue;
    report.rowsDeleted += await deleteCallHistory(knex, r.tenantId, cutoffOf(r.callsDays), limits);
  }
  report.idempotencyKeysCleared = await clearIdempotencyKeys(knex, cutoffOf(1), limits);
  return report;
}
