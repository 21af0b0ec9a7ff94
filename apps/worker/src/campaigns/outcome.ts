import { recipientOutcome, type Knex, type RecipientOutcome, type Sms } from '@switchboard/db';
import { emit } from '@switchboard/events';
import type { WorkerDeps } from '../deps';

/**
 * Counts one recipient's outcome on its campaign, inside the caller's transaction, and
 * completes the campaign when that was the last one.
 */
export async function countOutcome(
  deps: WorkerDeps,
  db: Knex,
  campaignId: string,
  outcome: RecipientOutcome,
): Promise<void> {
  if (await deps.stores.campaignLifecycle.tally(db, campaignId, outcome)) {
    await completeCampaign(deps, db, campaignId);
  }
}

/**
 * The campaigns' SMS outcome hook (registered on the SMS sender, see ./index.ts), called in
 * the transaction that records a message's send outcome: when
 * the message is a campaign's, its recipient takes the outcome (sent, failed, or opted_out
 * for a STOP that came after the claim), the campaign's counter moves, and the last outcome
 * completes the campaign, all in that one transaction.
 */
export async function settleCampaignMessage(deps: WorkerDeps, db: Knex, sms: Sms): Promise<void> {
  if (!sms.campaignId || (sms.status !== 'sent' && sms.status !== 'failed')) return;
  const outcome = recipientOutcome(sms.status, sms.errorCode);
  const settled = await deps.stores.campaignLifecycle.settle(db, sms.id, outcome);
  if (settled?.done) await completeCampaign(deps, db, settled.campaignId);
}

/**
 * running → completed with `campaign.completed`, in the caller's transaction. The update is
 * conditional (running, every recipient counted), so of all the transactions that try,
 * exactly one completes the campaign and emits; false for the others.
 */
export async function completeCampaign(
  deps: WorkerDeps,
  db: Knex,
  campaignId: string,
): Promise<boolean> {
  const campaign = await deps.stores.campaignLifecycle.complete(db, campaignId);
  if (!campaign?.completedAt) return false;
  // The receipts known at completion; later ones show on the campaign.
  const receipts = (await deps.stores.campaigns.receiptCounts(db, [campaignId])).get(campaignId);
  // Counted once the completion commits (the caller's transaction may still roll back).
  const committed = 'executionPromise' in db ? (db as Knex.Transaction).executionPromise : null;
  if (committed)
    committed.then(
      () => deps.metrics.campaignsCompleted.inc(),
      () => undefined,
    );
  else deps.metrics.campaignsCompleted.inc();
  await emit(db, {
    tenantId: campaign.tenantId,
    receptionistId: campaign.receptionistId,
    livemode: campaign.livemode,
    type: 'campaign.completed',
    data: {
      campaign_id: campaign.id,
      name: campaign.name,
      recipients: campaign.recipients,
      sent: campaign.sent,
      failed: campaign.failed,
      opted_out: campaign.optedOut,
      delivered: receipts?.delivered ?? 0,
      undelivered: receipts?.undelivered ?? 0,
      skipped: campaign.skipped,
      completed_at: campaign.completedAt.toISOString(),
    },
  });
  deps.logger.info(
    { campaignId, sent: campaign.sent, failed: campaign.failed, optedOut: campaign.optedOut },
    'campaign completed',
  );
  return true;
}
