import type { Knex } from 'knex';

const TABLE = 'tenants';

/** The most days of delivery history a tenant may keep (docs/API.md, Retention). */
export const MAX_DELIVERY_RETENTION_DAYS = 90;
/** The most days of call and SMS history a tenant may set (100 years: "for ever" is null). */
export const MAX_CALLS_RETENTION_DAYS = 36_500;

/** A tenant's own retention; null fields mean the default (deployment's days, for ever). */
export interface TenantRetention {
  tenantId: string;
  deliveryDays: number | null;
  callsDays: number | null;
}

interface Row {
  id: string;
  delivery_retention_days: number | null;
  calls_retention_days: number | null;
}

const toRetention = (r: Row): TenantRetention => ({
  tenantId: r.id,
  deliveryDays: r.delivery_retention_days,
  callsDays: r.calls_retention_days,
});

/** Per-tenant retention, read by the maintenance job and set by the operator CLI. */
export class TenantRetentionStore {
  constructor(private readonly db: Knex) {}

  /** Sets the given fields (undefined: unchanged); undefined when there is no such tenant. */
  async set(
    tenantId: string,
    change: { deliveryDays?: number | null; callsDays?: number | null },
  ): Promise<TenantRetention | undefined> {
    const update: Partial<Row> = {};
    if (change.deliveryDays !== undefined) update.delivery_retention_days = change.deliveryDays;
    if (change.callsDays !== undefined) update.calls_retention_days = change.callsDays;
    const q = this.db<Row>(TABLE).where({ id: tenantId });
    const [row] = Object.keys(update).length
      ? await q.update(update).returning(['id', 'delivery_retention_days', 'calls_retention_days'])
      : await q.select('id', 'delivery_retention_days', 'calls_retention_days');
    return row && toRetention(row as Row);
  }

  /** A tenant's retention; undefined when there is no such tenant. */
  async get(tenantId: string): Promise<TenantRetention | undefined> {
    const row = (await this.db(TABLE)
      .where({ id: tenantId })
      .first('id', 'delivery_retention_days', 'calls_retention_days')) as Row | undefined;
    return row && toRetention(row);
  }

  /** Every tenant with a retention of its own. */
  async listSet(): Promise<TenantRetention[]> {
    const rows = (await this.db(TABLE)
      .whereNotNull('delivery_retention_days')
      .orWhereNotNull('calls_retention_days')
      .select('id', 'delivery_retention_days', 'calls_retention_days')) as Row[];
    return rows.map(toRetention);
  }
}
