import type { Knex } from 'knex';
import { newId } from '../ids';
import { NOTIFY_API_KEY_CHANGE_SQL } from './api-key-changes';

const TABLE = 'tenants';

/**
 * A tenant's own API rate limit: a token bucket per API key refilling at `perSecond` and
 * holding at most `burst` requests (`burst >= perSecond`). `null` on a tenant means the
 * deployment's defaults.
 */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

export interface Tenant {
  id: string;
  name: string;
  planMinutes: number;
  rateLimit: RateLimit | null;
  /** `frame-ancestors` of the tenant portal page; empty: `'none'`. */
  portalOrigins: string[];
  createdAt: Date;
}

interface TenantRow {
  id: string;
  name: string;
  plan_minutes: number;
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
  portal_origins: string[] | null;
  created_at: Date;
}

/** Both columns or neither (a check constraint of migration 012). */
export const rateLimitOf = (perSecond: number | null, burst: number | null): RateLimit | null =>
  perSecond === null || burst === null ? null : { perSecond, burst };

const toTenant = (r: TenantRow): Tenant => ({
  id: r.id,
  name: r.name,
  planMinutes: r.plan_minutes,
  rateLimit: rateLimitOf(r.rate_limit_per_second, r.rate_limit_burst),
  portalOrigins: r.portal_origins ?? [],
  createdAt: r.created_at,
});

/** Per-tenant texts of the replies to SMS keywords (null: the default). */
export interface SmsReplyTexts {
  opt_out: string | null;
  opt_in: string | null;
  help: string | null;
}

export class TenantsStore {
  constructor(private readonly db: Knex) {}

  async create(input: { name: string; planMinutes?: number }): Promise<Tenant> {
    const [row] = await this.db<TenantRow>(TABLE)
      .insert({ id: newId('ten'), name: input.name, plan_minutes: input.planMinutes ?? 1000 })
      .returning('*');
    return toTenant(row as TenantRow);
  }

  /** Every tenant, oldest first (operator tooling; tenants are few). */
  async list(): Promise<Tenant[]> {
    const rows = await this.db<TenantRow>(TABLE).orderBy([
      { column: 'created_at' },
      { column: 'id' },
    ]);
    return rows.map(toTenant);
  }

  async get(id: string): Promise<Tenant | undefined> {
    const row = await this.db<TenantRow>(TABLE).where({ id }).first();
    return row && toTenant(row);
  }

  /** Sets the minutes included in the tenant's plan (operator tooling). */
  async setPlanMinutes(id: string, planMinutes: number): Promise<Tenant | undefined> {
    const [row] = await this.db<TenantRow>(TABLE)
      .where({ id })
      .update({ plan_minutes: planMinutes })
      .returning('*');
    return row && toTenant(row as TenantRow);
  }

  /**
   * Sets the tenant's API rate limit, or clears it (`null`: the deployment's defaults). It
   * applies from the next request of every API process: keys are read with their tenant's
   * limit, and the change notifies API_KEY_CHANGES_CHANNEL on commit, on which every API
   * process drops the keys it holds (ApiKeysStore, ACTIVE_KEY_TTL_MS).
   */
  async setRateLimit(id: string, limit: RateLimit | null): Promise<Tenant | undefined> {
    return this.db.transaction(async (trx) => {
      const [row] = await trx<TenantRow>(TABLE)
        .where({ id })
        .update({
          rate_limit_per_second: limit?.perSecond ?? null,
          rate_limit_burst: limit?.burst ?? null,
        })
        .returning('*');
      if (row) await trx.raw(`SELECT ${NOTIFY_API_KEY_CHANGE_SQL}`, [id]);
      return row && toTenant(row as TenantRow);
    });
  }

  /** The tenant's keyword reply texts; null where it uses the documented default. */
  async smsReplies(db: Knex, id: string): Promise<SmsReplyTexts | undefined> {
    const row = (await db(TABLE)
      .where({ id })
      .first('sms_reply_opt_out', 'sms_reply_opt_in', 'sms_reply_help')) as
      | {
          sms_reply_opt_out: string | null;
          sms_reply_opt_in: string | null;
          sms_reply_help: string | null;
        }
      | undefined;
    return (
      row && {
        opt_out: row.sms_reply_opt_out,
        opt_in: row.sms_reply_opt_in,
        help: row.sms_reply_help,
      }
    );
  }

  /** Sets (a string) or resets to the default (null) the reply texts named in `texts`. */
  async setSmsReplies(
    id: string,
    texts: Partial<SmsReplyTexts>,
  ): Promise<SmsReplyTexts | undefined> {
    const update: Record<string, string | null> = {};
    for (const [kind, text] of Object.entries(texts)) update[`sms_reply_${kind}`] = text;
    if (Object.keys(update).length) await this.db(TABLE).where({ id }).update(update);
    return this.smsReplies(this.db, id);
  }

  /** Sets the origins allowed to frame the tenant portal (empty: none). */
  async setPortalOrigins(id: string, origins: readonly string[]): Promise<Tenant | undefined> {
    const [row] = await this.db<TenantRow>(TABLE)
      .where({ id })
      .update({ portal_origins: [...origins] })
      .returning('*');
    return row && toTenant(row as TenantRow);
  }

  async findByName(name: string): Promise<Tenant | undefined> {
    const row = await this.db<TenantRow>(TABLE).where({ name }).orderBy('created_at').first();
    return row && toTenant(row);
  }
}
