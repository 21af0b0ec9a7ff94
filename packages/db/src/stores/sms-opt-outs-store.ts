import type { Knex } from 'knex';

/**
 * The per-tenant opt-out list: one row per phone that ever sent a keyword, holding the
 * consent of its latest keyword. Sends check it (in the insert and again in the worker's
 * claim); ingestion writes it in the transaction that stores the keyword message.
 */
export class SmsOptOutsStore {
  constructor(private readonly db: Knex) {}

  /**
   * Records a keyword sent at `at`: opted out (STOP family) or back in (START, UNSTOP, YES).
   * A keyword older than the one already recorded changes nothing, so keywords applied out
   * of order leave the consent of the latest one.
   */
  async record(
    db: Knex,
    input: { tenantId: string; phone: string; optedOut: boolean; at: Date; smsId: string },
  ): Promise<void> {
    await db.raw(
      `INSERT INTO sms_opt_outs AS o (tenant_id, phone, opted_out, changed_at, sms_id)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, phone) DO UPDATE
          SET opted_out = EXCLUDED.opted_out, changed_at = EXCLUDED.changed_at,
              sms_id = EXCLUDED.sms_id
        WHERE o.changed_at <= EXCLUDED.changed_at`,
      [input.tenantId, input.phone, input.optedOut, input.at, input.smsId],
    );
  }
}
