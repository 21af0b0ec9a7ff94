import { emit } from '@switchboard/events';
import type { Knex, UsageStore } from '@switchboard/db';

/**
 * Meters a call that ended `completed`, in the transaction that completes it and marks it
 * counted: the usage counters, and one `usage.threshold` per threshold this call reached
 * first (80 before 100), committed with it. Runs last in the transaction: from here to the
 * commit it holds the lock of the tenant's period row, which is what counts a tenant's
 * concurrent completions one after another.
 */
export async function meterCompletedCall(
  trx: Knex,
  usage: UsageStore,
  call: { tenantId: string; receptionistId: string; endedAt: Date; minutes: number },
): Promise<void> {
  const counted = await usage.addCompletedCall(trx, call);
  for (const threshold of counted.thresholdsReached) {
    await emit(trx, {
      tenantId: call.tenantId,
      type: 'usage.threshold',
      data: {
        threshold,
        minutes_used: counted.minutesUsed,
        minutes_included: counted.minutesIncluded,
        billing_period_end: counted.period.end.toISOString(),
      },
    });
  }
}
