import type { Deps } from '../../deps';
import { conflict, notFound } from '../../errors';
import { renderCampaign, withReceipts } from './render';

/**
 * queued | running → canceled (200 with the campaign). Nothing is claimed for sending once
 * this commits (every claim checks the campaign is running), so the workers stop within a
 * claim; the few messages stored before it still travel and are counted. Emits nothing.
 */
export async function cancelCampaign(deps: Deps, tenantId: string, id: string) {
  const canceled = await deps.knex.transaction((trx) =>
    deps.stores.campaignLifecycle.cancel(trx, tenantId, id),
  );
  if (canceled) {
    const [withCounts] = await withReceipts(deps, [canceled]);
    if (withCounts) return renderCampaign(withCounts);
  }
  const campaign = await deps.stores.campaigns.get(tenantId, id);
  if (!campaign) throw notFound('campaign', 'id');
  throw conflict(
    'invalid_state',
    `Campaign ${id} is ${campaign.status}; only a queued or running campaign can be canceled`,
  );
}
