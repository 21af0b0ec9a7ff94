import type { Knex } from 'knex';
import { newestFirst, type KeysetPage, type PageRequest } from '../keyset';
import { CAMPAIGN_COLUMNS, toCampaign, type Campaign, type CampaignRow } from './campaign-rows';

export * from './campaign-rows';

const TABLE = 'campaigns';

/** A campaign a worker should look at: one still to start, or one still sending. */
export interface OpenCampaign {
  id: string;
  tenantId: string;
  status: 'queued' | 'running';
  sendRatePerMinute: number;
  /** How long ago it was accepted, in milliseconds (Postgres's clock). */
  ageMs: number;
  /** Some recipient is still waiting for its claim. */
  hasPending: boolean;
}

/** How many of a campaign's messages the carrier reported delivered and undelivered. */
export interface ReceiptCounts {
  delivered: number;
  undelivered: number;
}

/** Reads of the campaigns table. The transitions are in campaign-lifecycle.ts. */
export class CampaignsStore {
  constructor(private readonly db: Knex) {}

  /**
   * The tenant's campaign, or undefined (another tenant's id is simply not found, nor, when
   * `livemode` is given, a campaign of the other mode: docs/API.md, Test mode).
   */
  async get(tenantId: string, id: string, livemode?: boolean): Promise<Campaign | undefined> {
    const q = this.db(TABLE).select(CAMPAIGN_COLUMNS).where({ tenant_id: tenantId, id });
    if (livemode !== undefined) q.andWhere('livemode', livemode);
    const row = (await q.first()) as CampaignRow | undefined;
    return row && toCampaign(row);
  }

  /** Any tenant's campaign by id: for the worker, which acts on ids it found itself. */
  async findById(db: Knex, id: string): Promise<Campaign | undefined> {
    const row = (await db(TABLE).select(CAMPAIGN_COLUMNS).where({ id }).first()) as
      CampaignRow | undefined;
    return row && toCampaign(row);
  }

  /** The campaign that holds the tenant's Idempotency-Key, if any. */
  async findByIdempotencyKey(db: Knex, tenantId: string, key: string) {
    const row = (await db(TABLE)
      .select(CAMPAIGN_COLUMNS)
      .where({ tenant_id: tenantId, idempotency_key: key })
      .first()) as CampaignRow | undefined;
    return row && toCampaign(row);
  }

  /** One page of the tenant's campaigns of one mode, newest first by (created_at, id). */
  async list(tenantId: string, page: PageRequest, livemode = true): Promise<KeysetPage<Campaign>> {
    const q = this.db(TABLE).select(CAMPAIGN_COLUMNS).where({ tenant_id: tenantId, livemode });
    return newestFirst(q, page, toCampaign, { time: 'created_at' });
  }

  /**
   * Delivery receipts of each campaign's messages so far (`delivered`, `undelivered`), read
   * from the messages themselves: receipts travel the SMS path only, and campaigns read them.
   */
  async receiptCounts(
    db: Knex,
    campaignIds: readonly string[],
  ): Promise<Map<string, ReceiptCounts>> {
    const counts = new Map<string, ReceiptCounts>(
      campaignIds.map((id) => [id, { delivered: 0, undelivered: 0 }]),
    );
    if (campaignIds.length === 0) return counts;
    const result = (await db.raw(
      `SELECT r.campaign_id,
              (count(*) FILTER (WHERE s.status = 'delivered'))::int AS delivered,
              (count(*) FILTER (WHERE s.status = 'undelivered'))::int AS undelivered
         FROM campaign_recipients r JOIN sms_messages s ON s.id = r.sms_id
        WHERE r.campaign_id = ANY(?) AND s.status IN ('delivered', 'undelivered')
        GROUP BY r.campaign_id`,
      [[...campaignIds]],
    )) as { rows: Array<{ campaign_id: string; delivered: number; undelivered: number }> };
    for (const r of result.rows) {
      counts.set(r.campaign_id, { delivered: r.delivered, undelivered: r.undelivered });
    }
    return counts;
  }

  /** Campaigns still to start or still sending, oldest first (the open-campaigns index). */
  async open(limit: number): Promise<OpenCampaign[]> {
    const result = (await this.db.raw(
      `SELECT c.id, c.tenant_id, c.status, c.send_rate_per_minute,
              (extract(epoch from now() - c.created_at) * 1000)::float8 AS age_ms,
              EXISTS (SELECT 1 FROM campaign_recipients r
                       WHERE r.campaign_id = c.id AND r.state = 'pending') AS has_pending
         FROM campaigns c
        WHERE c.status IN ('queued', 'running')
        ORDER BY c.created_at LIMIT ?`,
      [limit],
    )) as {
      rows: Array<{
        id: string;
        tenant_id: string;
        status: 'queued' | 'running';
        send_rate_per_minute: number;
        age_ms: number;
        has_pending: boolean;
      }>;
    };
    return result.rows.map((r) => ({
      id: r.id,
      tenantId: r.tenant_id,
      status: r.status,
      sendRatePerMinute: r.send_rate_per_minute,
      ageMs: r.age_ms,
      hasPending: r.has_pending,
    }));
  }
}
