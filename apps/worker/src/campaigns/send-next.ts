import type { ClaimedRecipient, Knex } from '@switchboard/db';
import { enqueue } from '@switchboard/queues';
import { renderCampaignMessage, smsSegments } from '@switchboard/sms';
import type { WorkerDeps } from '../deps';
import type { SmsSender } from '../sms';
import { countOutcome } from './outcome';

/** How long the fallback send job waits for the in-process send to have claimed the message. */
const FALLBACK_DELAY_MS = 10_000;

/** Opted-out recipients skipped in one transaction before it gives up its turn. */
const MAX_SKIPS = 100;

/**
 * - `created`: one recipient's message is stored and handed to the SMS path;
 * - `skipped`: only opted-out (or refused) recipients were claimed this turn;
 * - `finished`: the campaign is not running, or has no pending recipient left.
 */
export type SendStep = 'created' | 'skipped' | 'finished';

/**
 * One message of a campaign, for one taken unit of its rate. In one (durably) committed
 * transaction: the next pending recipient is claimed and its message stored (an SMS row with
 * `campaign_id`, `{{name}}` rendered), so the recipient and its only message exist together
 * or not at all; recipients who opted out are skipped and counted on the way. After the
 * commit the message is sent in this process at once when the sender's in-process budget
 * has room (`trySendNow`, not awaited: the rate is the pump's, not the carrier's latency),
 * with a delayed send job as the fallback should this process die first (the SMS claim
 * makes the later of the two a no-op); otherwise by its send job at once. If the job's add
 * is lost, the SMS reconciler adds it. The outcome settles the recipient through the
 * campaigns' SMS outcome hook (outcome.ts).
 */
export async function sendNext(
  deps: WorkerDeps,
  sms: SmsSender,
  campaignId: string,
): Promise<SendStep> {
  const step = await deps.knex.transaction(async (trx): Promise<SendStep | { smsId: string }> => {
    for (let i = 0; i < MAX_SKIPS; i++) {
      const claim = await deps.stores.campaignLifecycle.claimNext(trx, campaignId);
      if (!claim) return i === 0 ? 'finished' : 'skipped';
      if (claim.state === 'opted_out') {
        await countOutcome(deps, trx, campaignId, 'opted_out');
        continue;
      }
      if (await storeMessage(deps, trx, claim)) return { smsId: claim.smsId as string };
    }
    return 'skipped';
  });
  if (typeof step === 'string') return step;
  // In process when the budget has room (the job then only a fallback), else by the job.
  const inline = sms.trySendNow(step.smsId);
  try {
    const data = { v: 1 as const, smsId: step.smsId };
    const opts = inline ? { delay: FALLBACK_DELAY_MS } : undefined;
    await enqueue(deps.queues, 'sms', [{ data, opts }]);
  } catch (err) {
    deps.logger.warn({ err, ...step }, 'send job not added; the SMS reconciler will add it');
  }
  return 'created';
}

/**
 * Stores the claimed recipient's message through the SMS path's own insert. When that
 * insert refuses it (the number opted out after the claim read the list, or the
 * receptionist is no longer ready), the recipient ends opted_out or failed, counted. A
 * number a campaign of the tenant texted within the repeat window ends skipped, counted.
 */
async function storeMessage(
  deps: WorkerDeps,
  trx: Knex,
  claim: ClaimedRecipient,
): Promise<boolean> {
  // A tenant's campaigns text one number at most once per window (allow_repeat excepted).
  const { repeatWindowMs } = deps.config.campaigns;
  if (
    repeatWindowMs > 0 &&
    !(await deps.stores.campaignLifecycle.recordContact(trx, claim, repeatWindowMs))
  ) {
    await deps.stores.campaignLifecycle.resolveUnsent(trx, claim, 'skipped');
    await countOutcome(deps, trx, claim.campaignId, 'skipped');
    return false;
  }
  const message = renderCampaignMessage(claim.message, claim.name);
  const sms = await deps.stores.smsLifecycle.insertOutbound(trx, claim.smsId as string, {
    tenantId: claim.tenantId,
    receptionistId: claim.receptionistId,
    to: claim.phone,
    message,
    segments: smsSegments(message).segments,
    metadata: {},
    campaignId: claim.campaignId,
    idempotency: null,
    at: new Date(),
    // A test campaign's messages are test-mode SMS: simulated, never metered.
    livemode: claim.livemode,
  });
  if (sms) return true;
  const why = await deps.stores.sms.whyNotSendable(
    trx,
    claim.tenantId,
    claim.receptionistId,
    claim.phone,
  );
  const outcome = why === 'recipient_opted_out' ? 'opted_out' : 'failed';
  deps.logger.warn({ campaignId: claim.campaignId, why }, 'campaign message refused');
  await deps.stores.campaignLifecycle.resolveUnsent(trx, claim, outcome);
  await countOutcome(deps, trx, claim.campaignId, outcome);
  return false;
}
