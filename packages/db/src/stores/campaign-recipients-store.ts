import type { Knex } from 'knex';
import { keysetPage, type KeysetPage, type PageRequest } from '../keyset';

/**
 * Where a campaign's recipient stands: its own state (pending → sending → sent | failed;
 * opted_out, skipped, canceled), except that a carrier receipt of its message wins
 * (`delivered`, `undelivered`).
 */
export const RECIPIENT_OUTCOMES = [
  'pending',
  'sending',
  'sent',
  'delivered',
  'undelivered',
  'failed',
  'opted_out',
  'skipped',
  'canceled',
] as const;
export type CampaignRecipientOutcome = (typeof RECIPIENT_OUTCOMES)[number];

export interface CampaignRecipient {
  phone: string;
  leadId: string | null;
  outcome: CampaignRecipientOutcome;
  smsId: string | null;
  errorCode: string | null;
  sentAt: Date | null;
  updatedAt: Date;
}

interface RecipientRow {
  seq: number;
  listed_at: Date;
  phone: string;
  lead_id: string | null;
  outcome: CampaignRecipientOutcome;
  sms_id: string | null;
  error_code: string | null;
  sent_at: Date | null;
  updated_at: Date;
}

/** A receipt of the recipient's message wins over the recipient's own state. */
const OUTCOME_SQL =
  "CASE WHEN s.status IN ('delivered', 'undelivered') THEN s.status ELSE r.state END";

/** Reads of a campaign's recipients (the transitions are in campaign-lifecycle.ts). */
export class CampaignRecipientsStore {
  constructor(private readonly db: Knex) {}

  /**
   * One page of the recipients of the tenant's campaign, last in sending order first: the
   * keyset is (the campaign's created_at, seq), the first constant within a campaign, so
   * pages are stable however the recipients' states change during a walk. Undefined when the
   * tenant has no such campaign (of mode `filters.livemode`, when given: docs/API.md, Test mode).
   */
  async list(
    tenantId: string,
    campaignId: string,
    filters: { outcome?: CampaignRecipientOutcome; livemode?: boolean },
    page: PageRequest,
  ): Promise<KeysetPage<CampaignRecipient> | undefined> {
    const found = this.db('campaigns').select('id').where({ tenant_id: tenantId, id: campaignId });
    if (filters.livemode !== undefined) found.andWhere('livemode', filters.livemode);
    const campaign = (await found.first()) as { id: string } | undefined;
    if (!campaign) return undefined;
    const q = this.db({ r: 'campaign_recipients' })
      .join({ c: 'campaigns' }, 'c.id', 'r.campaign_id')
      .leftJoin({ s: 'sms_messages' }, 's.id', 'r.sms_id')
      .select(
        'r.seq',
        'c.created_at as listed_at',
        'r.phone',
        'r.lead_id',
        this.db.raw(`${OUTCOME_SQL} AS outcome`),
        'r.sms_id',
        's.error_code',
        's.sent_at',
        'r.updated_at',
      )
      .where({ 'r.campaign_id': campaignId, 'c.tenant_id': tenantId });
    if (filters.outcome) q.andWhereRaw(`${OUTCOME_SQL} = ?`, [filters.outcome]);
    const result = await keysetPage<RecipientRow>(q, {
      timeColumn: 'c.created_at',
      idColumn: 'r.seq',
      ...page,
      // The seq travels as text in the cursor; Postgres reads the parameter as an integer.
      position: (r) => ({ t: r.listed_at.getTime(), id: String(r.seq) }),
    });
    return {
      rows: result.rows.map((r) => ({
        phone: r.phone,
        leadId: r.lead_id,
        outcome: r.outcome,
        smsId: r.sms_id,
        errorCode: r.error_code,
        sentAt: r.sent_at,
        updatedAt: r.updated_at,
      })),
      next: result.next,
    };
  }
}
