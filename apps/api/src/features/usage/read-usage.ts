import { billingPeriod, billingPeriodOf, type BillingPeriod, type Usage } from '@switchboard/db';
import type { Deps } from '../../deps';
import { notFound } from '../../errors';

/** The period named by `YYYY-MM` (already validated), or the current month (UTC). */
export function periodOf(raw: string | undefined, now = new Date()): BillingPeriod {
  if (raw === undefined) return billingPeriodOf(now);
  const [year, month] = raw.split('-').map(Number);
  return billingPeriod(year as number, month as number);
}

/**
 * Percent of the included minutes, rounded half up to one decimal, in integer arithmetic so
 * that no binary fraction rounds 12.25 down; 0 when nothing is included.
 */
export function percentUsed(minutesUsed: number, minutesIncluded: number): number {
  if (minutesIncluded <= 0) return 0;
  const tenths = Math.floor((2000 * minutesUsed + minutesIncluded) / (2 * minutesIncluded));
  return tenths / 10;
}

export const renderUsage = (u: Usage) => ({
  billing_period_start: u.period.start.toISOString(),
  billing_period_end: u.period.end.toISOString(),
  minutes_used: u.minutesUsed,
  minutes_included: u.minutesIncluded,
  percent_used: percentUsed(u.minutesUsed, u.minutesIncluded),
  calls_completed: u.callsCompleted,
  sms_sent: u.smsSent,
  sms_received: u.smsReceived,
  by_receptionist: u.byReceptionist.map((r) => ({
    receptionist_id: r.receptionistId,
    name: r.name,
    minutes_used: r.minutesUsed,
    calls_completed: r.callsCompleted,
  })),
});

/** The tenant's usage in a period: one statement on the counters, never a scan of calls. */
export async function readUsage(deps: Deps, tenantId: string, period: BillingPeriod) {
  const usage = await deps.stores.usage.get(tenantId, period);
  if (!usage) throw notFound('tenant');
  return renderUsage(usage);
}
