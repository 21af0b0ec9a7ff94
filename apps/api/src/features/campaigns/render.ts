import type { Campaign, ReceiptCounts } from '@switchboard/db';
import type { Deps } from '../../deps';

/** A campaign with the delivery receipts of its messages so far. */
export type CampaignWithReceipts = Campaign & ReceiptCounts;

/** The public campaign shape (docs/API.md, Campaigns). */
export const renderCampaign = (c: CampaignWithReceipts) => ({
  id: c.id,
  name: c.name,
  receptionist_id: c.receptionistId,
  message: c.message,
  status: c.status,
  recipients: c.recipients,
  sent: c.sent,
  failed: c.failed,
  opted_out: c.optedOut,
  skipped: c.skipped,
  delivered: c.delivered,
  undelivered: c.undelivered,
  allow_repeat: c.allowRepeat,
  send_rate_per_minute: c.sendRatePerMinute,
  created_at: c.createdAt.toISOString(),
  started_at: c.startedAt?.toISOString() ?? null,
  completed_at: c.completedAt?.toISOString() ?? null,
  livemode: c.livemode,
});

/** Adds each campaign's receipt counts (one statement for the whole list). */
export async function withReceipts(
  deps: Deps,
  campaigns: readonly Campaign[],
): Promise<CampaignWithReceipts[]> {
  const counts = await deps.stores.campaigns.receiptCounts(
    deps.knex,
    campaigns.map((c) => c.id),
  );
  return campaigns.map((c) => ({
    ...c,
    ...(counts.get(c.id) ?? { delivered: 0, undelivered: 0 }),
  }));
}

/**
 * The 202 body: the campaign as it was accepted, built from its immutable columns, so a
 * replay answers exactly what the first request did, whatever happened to the campaign since.
 */
export const renderAcceptedCampaign = (c: Campaign) =>
  renderCampaign({
    ...c,
    status: 'queued',
    sent: 0,
    failed: 0,
    optedOut: 0,
    skipped: 0,
    delivered: 0,
    undelivered: 0,
    startedAt: null,
    completedAt: null,
  });
