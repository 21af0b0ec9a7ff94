import type { VersionCondition } from '@switchboard/db';
import type { Deps } from '../../deps';
import { conflict, notFound } from '../../errors';
import { preconditionFailed } from '../../http/if-match';
import { renderCampaign, withReceipts } from './render';

/**
 * queued | running → canceled (200 with the campaign and its version). Nothing is claimed for
 * sending once this commits (every claim checks the campaign is running), so the workers stop
 * within a claim; the few messages stored before it still travel and are counted. Emits nothing. A
 * campaign of the other mode is not found (docs/API.md, Test mode). A version `condition`
 * (If-Match) is part of the cancel's own statement; a campaign at another version is a 412,
 * whatever its state.
 */
export async function cancelCampaign(
  deps: Deps,
  tenantId: string,
  livemode: boolean,
  id: string,
  condition: VersionCondition = null,
) {
  const canceled = await deps.knex.transaction((trx) =>
    deps.stores.campaignLifecycle.cancel(trx, tenantId, id, condition, livemode),
  );
  if (canceled) {
    const [withCounts] = await withReceipts(deps, [canceled]);
    if (withCounts) return { version: canceled.version, body: renderCampaign(withCounts) };
  }
  const campaign = await deps.stores.campaigns.get(tenantId, id, livemode);
  if (!campaign) throw notFound('campaign', 'id');
  // Versions only grow: one the condition refuses now, it refused at the cancel too.
  if (condition && !condition.includes(campaign.version)) {
    throw preconditionFailed(campaign.version);
  }
  throw conflict(
    'invalid_state',
    `Campaign ${id} is ${campaign.status}; only a queued or running campaign can be canceled`,
  );
}
