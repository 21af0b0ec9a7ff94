import type { Knex } from 'knex';
import { runPrepared } from '../prepared';

// Usage metering (docs/API.md, Usage). The three usage tables are one aggregate, written and
// read only here: `usage_periods` (totals per tenant and month), `usage_receptionist_periods`
// (the same per receptionist) and `usage_thresholds` (one row per threshold reached).

/** The thresholds of `usage.threshold`, in the order they fire. */
export const USAGE_THRESHOLDS = [80, 100] as const;
export type UsageThreshold = (typeof USAGE_THRESHOLDS)[number];

/** A billing period: the calendar month (UTC) that contains `at`. */
export interface BillingPeriod {
  /** YYYY-MM-DD of the first day (the `period_start` key). */
  key: string;
  start: Date;
  /** The first instant of the next month. */
  end: Date;
}

export function billingPeriodOf(at: Date): BillingPeriod {
  return billingPeriod(at.getUTCFullYear(), at.getUTCMonth() + 1);
}

/** The period of a year and a 1-based month. */
export function billingPeriod(year: number, month: number): BillingPeriod {
  const start = new Date(0);
  start.setUTCFullYear(year, month - 1, 1);
  const end = new Date(start);
  end.setUTCMonth(end.getUTCMonth() + 1);
  return { key: start.toISOString().slice(0, 10), start, end };
}

/** Minutes a completed call adds: every started minute counts. */
export const minutesOf = (durationSeconds: number): number =>
  Math.ceil(Math.max(0, durationSeconds) / 60);

export interface CountedCall {
  period: BillingPeriod;
  /** The period's total after this call. */
  minutesUsed: number;
  minutesIncluded: number;
  /**
   * Thresholds this call reached first, ascending. The caller must emit one
   * `usage.threshold` per entry in the same transaction: no other transaction ever will.
   */
  thresholdsReached: UsageThreshold[];
}

export interface ReceptionistUsage {
  receptionistId: string;
  name: string;
  minutesUsed: number;
  callsCompleted: number;
}

export interface Usage {
  period: BillingPeriod;
  minutesUsed: number;
  minutesIncluded: number;
  callsCompleted: number;
  smsSent: number;
  smsReceived: number;
  /** Receptionists with completed calls in the period, most minutes first. */
  byReceptionist: ReceptionistUsage[];
}

// $1 minutes, $2 tenant, $3 period_start, $4 receptionist.
const COUNT_CALL = `
  WITH by_receptionist AS (
    INSERT INTO usage_receptionist_periods AS u
           (tenant_id, period_start, receptionist_id, minutes_used, calls_completed)
    VALUES ($2::text, $3::date, $4::text, $1::int, 1)
    ON CONFLICT (tenant_id, period_start, receptionist_id) DO UPDATE
       SET minutes_used = u.minutes_used + EXCLUDED.minutes_used,
           calls_completed = u.calls_completed + 1, updated_at = now()
  ), total AS (
    INSERT INTO usage_periods AS u (tenant_id, period_start, minutes_used, calls_completed)
    VALUES ($2::text, $3::date, $1::int, 1)
    ON CONFLICT (tenant_id, period_start) DO UPDATE
       SET minutes_used = u.minutes_used + EXCLUDED.minutes_used,
           calls_completed = u.calls_completed + 1, updated_at = now()
    RETURNING minutes_used, (SELECT plan_minutes FROM tenants WHERE id = $2::text) AS plan_minutes
  ), reached AS (
    INSERT INTO usage_thresholds (tenant_id, period_start, threshold, minutes_used, minutes_included)
    SELECT $2::text, $3::date, th.threshold, total.minutes_used, total.plan_minutes
      FROM total, (VALUES (80), (100)) AS th(threshold)
     WHERE total.plan_minutes > 0
       AND total.minutes_used::bigint * 100 >= th.threshold::bigint * total.plan_minutes
    ON CONFLICT DO NOTHING
    RETURNING threshold
  )
  SELECT total.minutes_used, total.plan_minutes,
         (SELECT coalesce(array_agg(threshold ORDER BY threshold), '{}') FROM reached) AS reached
    FROM total`;

const READ_USAGE = `
  SELECT t.plan_minutes,
         coalesce(p.minutes_used, 0) AS minutes_used,
         coalesce(p.calls_completed, 0) AS calls_completed,
         coalesce(p.sms_sent, 0) AS sms_sent,
         coalesce(p.sms_received, 0) AS sms_received,
         coalesce((
           SELECT json_agg(json_build_object(
                    'receptionist_id', u.receptionist_id, 'name', r.name,
                    'minutes_used', u.minutes_used, 'calls_completed', u.calls_completed)
                  ORDER BY u.minutes_used DESC, u.receptionist_id)
             FROM usage_receptionist_periods u
             JOIN receptionists r ON r.id = u.receptionist_id
            WHERE u.tenant_id = t.id AND u.period_start = :period AND u.calls_completed > 0
         ), '[]'::json) AS by_receptionist
    FROM tenants t
    LEFT JOIN usage_periods p ON p.tenant_id = t.id AND p.period_start = :period
   WHERE t.id = :tenantId`;

const SMS_COLUMN = { outbound: 'sms_sent', inbound: 'sms_received' } as const;

export class UsageStore {
  constructor(private readonly db: Knex) {}

  /**
   * Adds a call that ended `completed` to its tenant's and receptionist's counters for the
   * month of `endedAt`, in one statement inside the transaction that completes the call. The
   * caller counts a call once: it calls this only in the transaction that set the call's
   * `countedMinutes` marker (under the call row's lock). The update of the tenant's period
   * row holds its lock until the caller commits, so a tenant's completions are counted one
   * after another and each threshold row is inserted by exactly one of them.
   */
  async addCompletedCall(
    db: Knex,
    call: { tenantId: string; receptionistId: string; endedAt: Date; minutes: number },
  ): Promise<CountedCall> {
    const period = billingPeriodOf(call.endedAt);
    const [row] = await runPrepared<{
      minutes_used: number;
      plan_minutes: number;
      reached: number[];
    }>(db, 'usage_add_completed_call', COUNT_CALL, [
      call.minutes,
      call.tenantId,
      period.key,
      call.receptionistId,
    ]);
    if (!row) throw new Error(`no tenant ${call.tenantId} to count usage for`);
    return {
      period,
      minutesUsed: row.minutes_used,
      minutesIncluded: row.plan_minutes,
      thresholdsReached: row.reached.filter((t): t is UsageThreshold =>
        (USAGE_THRESHOLDS as readonly number[]).includes(t),
      ),
    };
  }

  /**
   * Counts one SMS (outbound sent, or inbound received) in the month of `at`, inside the
   * caller's transaction. For the SMS code path; SMS never fires a threshold.
   */
  async countSms(
    db: Knex,
    sms: { tenantId: string; receptionistId: string; at: Date; direction: 'outbound' | 'inbound' },
  ): Promise<void> {
    const column = SMS_COLUMN[sms.direction];
    const period = billingPeriodOf(sms.at).key;
    await db.raw(
      `WITH r AS (
         INSERT INTO usage_receptionist_periods AS u (tenant_id, period_start, receptionist_id, ??)
         VALUES (:tenantId, :period, :receptionistId, 1)
         ON CONFLICT (tenant_id, period_start, receptionist_id) DO UPDATE
            SET ?? = u.?? + 1, updated_at = now()
       )
       INSERT INTO usage_periods AS u (tenant_id, period_start, ??) VALUES (:tenantId, :period, 1)
       ON CONFLICT (tenant_id, period_start) DO UPDATE SET ?? = u.?? + 1, updated_at = now()`.replace(
        /\?\?/g,
        column,
      ),
      { tenantId: sms.tenantId, receptionistId: sms.receptionistId, period },
    );
  }

  /** The tenant's usage in `period` (one statement on primary keys); undefined: no tenant. */
  async get(tenantId: string, period: BillingPeriod): Promise<Usage | undefined> {
    const result = (await this.db.raw(READ_USAGE, { tenantId, period: period.key })) as {
      rows: Array<{
        plan_minutes: number;
        minutes_used: number;
        calls_completed: number;
        sms_sent: number;
        sms_received: number;
        by_receptionist: Array<{
          receptionist_id: string;
          name: string;
          minutes_used: number;
          calls_completed: number;
        }>;
      }>;
    };
    const row = result.rows[0];
    return (
      row && {
        period,
        minutesUsed: row.minutes_used,
        minutesIncluded: row.plan_minutes,
        callsCompleted: row.calls_completed,
        smsSent: row.sms_sent,
        smsReceived: row.sms_received,
        byReceptionist: row.by_receptionist.map((r) => ({
          receptionistId: r.receptionist_id,
          name: r.name,
          minutesUsed: r.minutes_used,
          callsCompleted: r.calls_completed,
        })),
      }
    );
  }
}
