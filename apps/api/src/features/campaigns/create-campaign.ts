import type { Campaign, Knex, RecipientsAdded, RecipientSource } from '@switchboard/db';
import { enqueueFromRequest } from '@switchboard/queues';
import { blankWithoutName, renderedLength } from '@switchboard/sms';
import type { Deps } from '../../deps';
import { ApiError, invalidParameter, notFound } from '../../errors';
import { replayOrReject, type IdempotencyScope, type IdempotentResponse } from '../../idempotency';
import { renderAcceptedCampaign } from './render';
import { MAX_RECIPIENTS, MESSAGE_MAX, type CreateCampaignBody } from './schemas';

const badRecipients = (code: 'no_recipients' | 'too_many_recipients', message: string): ApiError =>
  new ApiError(400, 'invalid_request_error', code, message, 'recipients');

const sourceOf = (r: CreateCampaignBody['recipients']): RecipientSource => {
  if (r.lead_ids) return { leadIds: r.lead_ids };
  if (r.phones) return { phones: r.phones };
  return { leadFilter: r.lead_filter ?? {} };
};

/** The accepted list must be usable: some recipients, not too many, a message that fits. */
function checkRecipients(message: string, added: RecipientsAdded): void {
  if (added.count === 0) {
    throw badRecipients(
      'no_recipients',
      'No recipients: recipients resolves to no phone number (leads without a phone are skipped)',
    );
  }
  if (added.count > MAX_RECIPIENTS) {
    throw badRecipients(
      'too_many_recipients',
      `More than ${MAX_RECIPIENTS} recipients; split the campaign (e.g. by lead_filter.tag)`,
    );
  }
  const longest = renderedLength(message, added.longestName);
  if (longest > MESSAGE_MAX) {
    throw invalidParameter(
      'message',
      `message is ${longest} characters once {{name}} is replaced by the longest recipient ` +
        `name (${added.longestName} characters); at most ${MESSAGE_MAX}`,
    );
  }
  if (added.nameless > 0 && blankWithoutName(message)) {
    throw invalidParameter('message', 'message is empty for recipients without a name');
  }
}

async function checkReceptionist(
  deps: Deps,
  trx: Knex,
  tenantId: string,
  id: string,
): Promise<void> {
  const receptionist = await deps.stores.receptionists.get(trx, tenantId, id);
  if (!receptionist) throw notFound('receptionist', 'receptionist_id');
  if (receptionist.status !== 'ready' || !receptionist.phoneNumber) {
    throw new ApiError(
      409,
      'invalid_request_error',
      'receptionist_not_ready',
      `Receptionist ${id} is not ready; campaigns are sent from a ready receptionist's number`,
      'receptionist_id',
    );
  }
}

/**
 * The accepting transaction: the campaign and one row per distinct recipient, or nothing.
 * `created: false` when the Idempotency-Key already holds a campaign (checked first, so a
 * retry of an accepted campaign is a replay whatever changed since).
 */
async function accept(
  deps: Deps,
  trx: Knex,
  tenantId: string,
  body: CreateCampaignBody,
  idempotency: IdempotencyScope | null,
  livemode: boolean,
): Promise<{ campaign: Campaign; created: boolean }> {
  const { campaigns, campaignLifecycle: lifecycle } = deps.stores;
  const holder = async () =>
    idempotency && (await campaigns.findByIdempotencyKey(trx, tenantId, idempotency.key));
  const held = await holder();
  if (held) return { campaign: held, created: false };
  await checkReceptionist(deps, trx, tenantId, body.receptionist_id);
  const campaign = await lifecycle.insert(trx, {
    tenantId,
    receptionistId: body.receptionist_id,
    name: body.name,
    message: body.message,
    sendRatePerMinute: body.send_rate_per_minute,
    allowRepeat: body.allow_repeat,
    idempotency,
    livemode,
  });
  if (!campaign) {
    // The key's holder committed while this insert waited for it.
    const raced = await holder();
    if (!raced) throw new Error('idempotency conflict without a holder');
    return { campaign: raced, created: false };
  }
  const source = sourceOf(body.recipients);
  if ('leadIds' in source) {
    const unknown = await lifecycle.firstUnknownLead(trx, tenantId, livemode, source.leadIds);
    if (unknown) throw notFound(`lead ${unknown}`, 'recipients.lead_ids');
  }
  const added = await lifecycle.addRecipients(trx, campaign, source, MAX_RECIPIENTS + 1);
  checkRecipients(body.message, added);
  return { campaign: { ...campaign, recipients: added.count }, created: true };
}

/**
 * Accepts a campaign (202) of the key's mode (`livemode`): a test-mode campaign reaches test leads
 * only and sends test-mode SMS (docs/API.md, Test mode). Invariants: the recipients are resolved
 * and expanded once, here, in the transaction that stores the campaign (deduplicated by phone,
 * leads without a phone skipped), so `recipients` in the 202 is final and any refusal stores
 * nothing; the start job is added after the commit, and a failure to add it still answers 202
 * because every worker starts a campaign left queued. With an Idempotency-Key, a key that already
 * holds a campaign is a replay of it (or a 422 when the body differs), decided by Postgres.
 */
export async function createCampaign(
  deps: Deps,
  tenantId: string,
  body: CreateCampaignBody,
  idempotency: IdempotencyScope | null,
  livemode: boolean,
): Promise<IdempotentResponse> {
  const { campaign, created } = await deps.knex.transaction((trx) =>
    accept(deps, trx, tenantId, body, idempotency, livemode),
  );
  if (!created) replayOrReject(campaign.idempotencyFingerprint, idempotency);
  else await enqueueStart(deps, campaign.id);
  return {
    status: 202,
    body: renderAcceptedCampaign(campaign),
    location: `/api/v1/campaigns/${campaign.id}`,
    replayed: !created,
  };
}

/** Adds the start job (jobId = campaign id); never fails the request. */
async function enqueueStart(deps: Deps, campaignId: string): Promise<void> {
  try {
    await enqueueFromRequest(deps.queues, deps.redis, 'campaigns', { data: { v: 1, campaignId } });
  } catch (err) {
    deps.logger.warn({ err, campaignId }, 'start job not added; a worker will start the campaign');
  }
}
