import { composite, type Component } from '../component';
import type { WorkerDeps } from '../deps';
import type { ReconcileOptions } from '../reconcile';
import { startQueueWorker, type QueueTimings } from '../queue-worker';
import type { SmsSender } from '../sms';
import { settleCampaignMessage } from './outcome';
import { CampaignPump } from './pump';
import { CampaignRateLimiter } from './rate';
import { startCampaign, startCampaignTicks } from './reconciler';

export { rateWindows, CampaignRateLimiter } from './rate';
export { settleCampaignMessage } from './outcome';

export interface CampaignOptions extends QueueTimings, ReconcileOptions {
  /** How often a worker looks for running campaigns to join (default 1000 ms). */
  pollMs?: number;
  /** Campaigns one worker sends at once, oldest first (default 100). */
  maxCampaigns?: number;
}

/**
 * SMS campaigns: the start job (queued → running), this worker's loops that send the running
 * campaigns at their rate, and the ticks that join, start and repair (reconciler.ts). One
 * component, so the runner starts and drains it with a single line (before the SMS sender,
 * whose in-process sends it starts). Messages travel the SMS sender (../sms); campaigns
 * register their outcome hook there, which settles each recipient with its message's
 * outcome. Imports point one way: campaigns → sms.
 */
export function startCampaigns(
  deps: WorkerDeps,
  sms: SmsSender,
  opts: CampaignOptions = {},
): Component {
  sms.onOutcome((db, message) => settleCampaignMessage(deps, db, message));
  const limiter = new CampaignRateLimiter(
    deps.redis,
    deps.config.queuePrefix,
    deps.config.campaigns.tenantRatePerMinute,
  );
  const pump = new CampaignPump(deps, sms, limiter, 1000);
  const worker = startQueueWorker(
    deps,
    'campaigns',
    (data) => startCampaign(deps, pump, data.campaignId),
    { ...opts, concurrency: 4 },
  );
  const ticks = startCampaignTicks(deps, pump, {
    pollMs: opts.pollMs ?? 1000,
    reconcileIntervalMs: opts.reconcileIntervalMs ?? 5000,
    graceMs: opts.reconcileGraceMs ?? 15_000,
    maxCampaigns: opts.maxCampaigns ?? 100,
  });
  // The start worker and the ticks first, so that nothing joins a stopping pump.
  return composite('campaigns', [worker, ticks], [pump]);
}
