import type { Knex } from 'knex';
import { keysetPage, type KeysetPage, type PageRequest } from '../keyset';

/** A phone that opted out of a tenant's SMS, with the keyword and when. */
export interface SmsOptOut {
  phone: string;
  /** The keyword as the recipient sent it, letters only and upper case (`STOP`). */
  keyword: string | null;
  optedOutAt: Date;
}

interface OptOutRow {
  phone: string;
  keyword: string | null;
  changed_at: Date;
}

/**
 * The per-tenant opt-out list: one row per phone that ever sent a keyword, holding the
 * consent of its latest keyword. Sends check it (in the insert and again in the worker's
 * claim); ingestion writes it in the transaction that stores the keyword message. Only a
 * recipient's own keyword changes it: no API removes an opt-out.
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
    input: {
      tenantId: string;
      phone: string;
      optedOut: boolean;
      keyword: string;
      at: Date;
      smsId: string;
    },
  ): Promise<void> {
    await db.raw(
      `INSERT INTO sms_opt_outs AS o (tenant_id, phone, opted_out, keyword, changed_at, sms_id)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, phone) DO UPDATE
          SET opted_out = EXCLUDED.opted_out, keyword = EXCLUDED.keyword,
              changed_at = EXCLUDED.changed_at, sms_id = EXCLUDED.sms_id
        WHERE o.changed_at <= EXCLUDED.changed_at`,
      [input.tenantId, input.phone, input.optedOut, input.keyword, input.at, input.smsId],
    );
  }

  /** One page of the tenant's current opt-outs, newest first by (opted_out_at, phone). */
  async list(
    tenantId: string,
    filters: { phone?: string },
    page: PageRequest,
  ): Promise<KeysetPage<SmsOptOut>> {
    const q = this.db('sms_opt_outs')
      .select('phone', 'keyword', 'changed_at')
      .where({ tenant_id: tenantId, opted_out: true });
    if (filters.phone) q.andWhere('phone', filters.phone);
    const result = await keysetPage<OptOutRow>(q, {
      timeColumn: 'changed_at',
      idColumn: 'phone',
      ...page,
      position: (r) => ({ t: r.changed_at.getTime(), id: r.phone }),
    });
    return {
      rows: result.rows.map((r) => ({
        phone: r.phone,
        keyword: r.keyword,
        optedOutAt: r.changed_at,
      })),
      next: result.next,
    };
  }
}
