import { emit } from '@switchboard/events';
import type { Knex, Sms } from '@switchboard/db';
import type { SmsJob } from '@switchboard/queues';
import { settleCampaignMessage } from '../campaigns/outcome';
import type { WorkerDeps } from '../deps';
import { untilCommitted } from '../until-committed';
import type { SmsProvider, SmsRequest, SmsSendResult } from './provider';

/**
 * Runs `fn` in a transaction that commits durably, whatever the pool's default: a claim that
 * guards a hand-off to the carrier, and the outcome with its `sms.sent` event, must survive a
 * crash of Postgres right after the commit.
 */
export function durably<T>(knex: Knex, fn: (trx: Knex) => Promise<T>): Promise<T> {
  return knex.transaction(async (trx) => {
    await trx.raw('SET LOCAL synchronous_commit = on');
    return fn(trx);
  });
}

const requestOf = (sms: Sms): SmsRequest => ({
  smsId: sms.id,
  receptionistId: sms.receptionistId,
  from: sms.from,
  to: sms.to,
  message: sms.message,
  segments: sms.segments,
});

/**
 * The sms processor (jobId = message id). Invariant: a message is handed to the provider at
 * most once. The job carries only the id; the processor claims the row (queued → sending,
 * committed durably) before the hand-off and sends only if that claim won, so a duplicate job,
 * a re-run after a crash or a reconciler re-add never sends it a second time.
 */
export function sendProcessor(
  deps: WorkerDeps,
  provider: SmsProvider,
  opts: { staleSendingMs: number },
) {
  const { sms: store } = deps.stores;
  return async (data: SmsJob): Promise<void> => {
    // Before the claim: the reconciler judges a send interrupted `staleSendingMs` after it.
    const claimedAt = Date.now();
    const sms = await durably(deps.knex, async (trx) => {
      const claimed = await store.claimForSending(trx, data.smsId);
      // Failed by the claim (the recipient opted out since): a campaign counts it now.
      if (claimed?.status === 'failed') await settleCampaignMessage(deps, trx, claimed);
      return claimed;
    });
    // Gone, claimed already, or failed by the claim.
    if (sms?.status !== 'sending') return;
    let result: SmsSendResult;
    try {
      result = await provider.send(requestOf(sms));
    } catch (err) {
      // The claim is spent (never handed over again), so the message must not stay sending.
      deps.logger.warn({ err, smsId: sms.id, provider: provider.name }, 'SMS send failed');
      result = { status: 'rejected', errorCode: 'provider_error' };
    }
    // The carrier's answer is recorded in place, retried through a Postgres outage until it
    // commits (the job holding its slot meanwhile): a text the carrier took ends `sent` with
    // its event and usage. Bounded so that every retry happens before the reconciler may
    // judge the send interrupted: the two never race, and an outage longer than that ends as
    // `send_interrupted` (the reconciler's verdict), never as a second hand-off.
    const giveUpAfterMs = claimedAt + opts.staleSendingMs - RECORD_MARGIN_MS - Date.now();
    const recorded = await untilCommitted(
      deps.logger,
      `SMS outcome ${sms.id}`,
      () => recordOutcome(deps, sms, result),
      { giveUpAfterMs: Math.max(0, giveUpAfterMs) },
    );
    if (recorded) {
      (result.status === 'rejected' ? deps.metrics.smsFailed : deps.metrics.smsSent).inc();
    } else {
      // The reconciler judged the send interrupted first; its verdict stands.
      deps.logger.warn({ smsId: sms.id, result: result.status }, 'SMS outcome came too late');
    }
  };
}

/** Left between the last retry of an outcome and the reconciler's verdict on it. */
const RECORD_MARGIN_MS = 10_000;

/**
 * The carrier's answer, in one durable transaction: `failed` with its code, or `sent` with
 * its usage, its `sms.sent` and its campaign recipient. Harmless to repeat (each write is
 * conditional on the message still being `sending`): false when it no longer was.
 */
function recordOutcome(deps: WorkerDeps, sms: Sms, result: SmsSendResult): Promise<boolean> {
  const { sms: store } = deps.stores;
  return durably(deps.knex, async (trx) => {
    if (result.status === 'rejected') {
      if (!(await store.markFailed(trx, sms.id, result.errorCode))) return false;
      const failed = { ...sms, status: 'failed' as const, errorCode: result.errorCode };
      await settleCampaignMessage(deps, trx, failed);
      return true;
    }
    const sent = await store.markSent(trx, sms.id, {
      sentAt: new Date(),
      providerMessageId: result.providerMessageId,
    });
    if (!sent?.sentAt) return false;
    await deps.stores.usage.countSms(trx, {
      tenantId: sent.tenantId,
      receptionistId: sent.receptionistId,
      at: sent.sentAt,
      direction: 'outbound',
    });
    await emit(trx, {
      tenantId: sent.tenantId,
      receptionistId: sent.receptionistId,
      type: 'sms.sent',
      data: {
        sms_id: sent.id,
        from: sent.from,
        to: sent.to,
        message: sent.message,
        sent_at: sent.sentAt.toISOString(),
        campaign_id: sent.campaignId,
      },
    });
    // A campaign's message: its recipient is sent, counted, maybe the campaign completed.
    await settleCampaignMessage(deps, trx, sent);
    return true;
  });
}
