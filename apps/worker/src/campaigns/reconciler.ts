import type { Component } from '../component';
import type { WorkerDeps } from '../deps';
import { startTicker } from '../ticker';
import { completeCampaign, settleCampaignMessage } from './outcome';
import type { CampaignPump } from './pump';
import { campaignTraceContext, keepCampaignTrace } from './trace';

export interface CampaignTickOptions {
  /** How often this worker looks for campaigns to start or join. */
  pollMs: number;
  /** How often the repairs below run. */
  reconcileIntervalMs: number;
  /** How long a queued campaign may wait for its start job before it is started anyway. */
  graceMs: number;
  /** At most this many campaigns are sent by one worker at once (oldest first). */
  maxCampaigns: number;
}

const BATCH = 100;

/**
 * Starts a queued campaign (queued → running: the first job or tick wins, the others find
 * it running) and joins this worker to it when it has recipients waiting. Run by the start
 * job, in the trace of the request that created the campaign (tracing on), it keeps that
 * trace for the workers that join later (./trace.ts).
 */
export async function startCampaign(
  deps: WorkerDeps,
  pump: CampaignPump,
  campaignId: string,
): Promise<void> {
  const started = await deps.stores.campaignLifecycle.start(deps.knex, campaignId);
  const campaign = started ?? (await deps.stores.campaigns.findById(deps.knex, campaignId));
  if (campaign?.status !== 'running') return;
  await keepCampaignTrace(deps, campaign.id);
  pump.join(campaign.id, campaign.tenantId, campaign.sendRatePerMinute);
}

/**
 * Rows are the truth, jobs are hints. Every worker, every `pollMs`: joins each running
 * campaign that has recipients waiting (so a second worker shares a campaign within a
 * poll, and a campaign outlives the death of any worker), and starts a campaign still queued
 * after `graceMs` (its start job was lost). Every `reconcileIntervalMs`, two repairs that
 * the normal path makes unnecessary (each is the same conditional statement as that path,
 * so a repair and the normal path never both count or both emit): a message whose outcome
 * its recipient does not show is settled, and a running campaign whose recipients are all
 * counted is completed, with its `campaign.completed`.
 */
export function startCampaignTicks(
  deps: WorkerDeps,
  pump: CampaignPump,
  opts: CampaignTickOptions,
): Component {
  const { stores, knex, logger } = deps;

  async function discover(): Promise<void> {
    for (const c of await stores.campaigns.open(opts.maxCampaigns)) {
      if (c.status === 'queued' && c.ageMs > opts.graceMs) {
        logger.info({ campaignId: c.id }, 'starting a campaign whose start job was lost');
        await startCampaign(deps, pump, c.id);
      } else if (c.status === 'running' && c.hasPending && !pump.sends(c.id)) {
        // In the campaign's trace when it is known (tracing on): one trace per campaign.
        const trace = await campaignTraceContext(deps, c.id);
        pump.join(c.id, c.tenantId, c.sendRatePerMinute, trace);
      }
    }
  }

  async function repair(): Promise<void> {
    const lifecycle = stores.campaignLifecycle;
    for (const m of await lifecycle.unsettled(knex, opts.graceMs, BATCH)) {
      const sms = await stores.sms.findById(knex, m.smsId);
      if (sms) await knex.transaction((trx) => settleCampaignMessage(deps, trx, sms));
      logger.warn({ smsId: m.smsId }, 'campaign recipient settled by the reconciler');
    }
    for (const id of await lifecycle.finishedIds(knex, BATCH)) {
      if (await knex.transaction((trx) => completeCampaign(deps, trx, id))) {
        logger.warn({ campaignId: id }, 'campaign completed by the reconciler');
      }
    }
  }

  const discovery = startTicker('campaign-discovery', opts.pollMs, logger, discover);
  const reconciler = startTicker('campaign-reconciler', opts.reconcileIntervalMs, logger, repair);
  return {
    name: 'campaign-ticks',
    async close() {
      await Promise.all([discovery.close(), reconciler.close()]);
    },
  };
}
