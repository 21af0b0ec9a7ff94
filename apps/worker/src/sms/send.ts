import type { Knex, Sms } from '@switchboard/db';
import type { SmsJob } from '@switchboard/queues';
import { applyHeldReceipt, emitSmsOutcome, emitSmsSent } from '@switchboard/sms';
import type { WorkerDeps } from '../deps';
import { untilCommitted } from '../until-committed';
import type { SmsOutcomeHooks } from './outcome-hooks';
import type { SmsProvider, SmsRequest, SmsSendResult } from './provider';

const requestOf = (sms: Sms): SmsRequest => ({
  smsId: sms.id,
  receptionistId: sms.receptionistId,
  from: sms.from,
  to: sms.to,
  message: sms.message,
  segments: sms.segments,
});

/** Sends one message by id: the sms job's processor, and the in-process send after a claim. */
export type SendSms = (data: SmsJob) => Promise<void>;

/**
 * The sms processor (jobId = message id). A test-mode message (docs/API.md, Test mode) is
 * handed to `opts.simulator` whatever `provider` is: the mode rides with the message (read by
 * the claim), not with the process. Invariant: a message is handed to a provider at most
 * once. The job carries only the id; the processor claims the row (queued → sending,
 * committed durably) before the hand-off and sends only if that claim won, so a duplicate job,
 * a re-run after a crash, a reconciler re-add or an in-process send racing its own job never
 * sends it a second time. Each outcome is recorded with its event and the owners' hooks
 * (a campaign's recipient) in one transaction.
 */
export function sendProcessor(
  deps: WorkerDeps,
  live: SmsProvider,
  hooks: SmsOutcomeHooks,
  opts: { staleSendingMs: number; simulator?: SmsProvider },
): SendSms {
  const simulator = opts.simulator ?? live;
  const lifecycle = deps.stores.smsLifecycle;
  return async (data) => {
    // Before the claim: the reconciler judges a send interrupted `staleSendingMs` after it.
    const claimedAt = Date.now();
    const sms = await deps.knex.transaction(async (trx) => {
      const claimed = await lifecycle.claim(trx, data.smsId);
      // Failed by the claim (the recipient opted out since): reported and settled now.
      if (claimed?.status === 'failed') await failed(hooks, trx, claimed);
      return claimed;
    });
    // Gone, claimed already, or failed by the claim.
    if (sms?.status !== 'sending') return;
    const provider = sms.livemode ? live : simulator;
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
      () => recordOutcome(deps, hooks, sms, result),
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
 * The carrier's answer, in one durable transaction: `failed` with `sms.failed`, or `sent` with its
 * usage (live messages only), its `sms.sent` and a receipt that came early; the owners' hooks (a
 * campaign's recipient) either way. Harmless to repeat (each write is conditional on the message
 * still being `sending`): false when it no longer was.
 */
function recordOutcome(
  deps: WorkerDeps,
  hooks: SmsOutcomeHooks,
  sms: Sms,
  result: SmsSendResult,
): Promise<boolean> {
  const lifecycle = deps.stores.smsLifecycle;
  return deps.knex.transaction(async (trx) => {
    if (result.status === 'rejected') {
      const failedSms = await lifecycle.markFailed(trx, sms.id, result.errorCode);
      if (!failedSms) return false;
      await failed(hooks, trx, failedSms);
      return true;
    }
    const sent = await lifecycle.markSent(trx, sms.id, {
      sentAt: new Date(),
      providerMessageId: result.providerMessageId,
    });
    if (!sent?.sentAt) return false;
    // A test-mode message is never metered (docs/API.md, Test mode).
    if (sent.livemode) {
      await deps.stores.usage.countSms(trx, {
        tenantId: sent.tenantId,
        receptionistId: sent.receptionistId,
        at: sent.sentAt,
        direction: 'outbound',
      });
    }
    await emitSmsSent(trx, sent);
    // A campaign's message: its recipient is sent, counted, maybe the campaign completed.
    await hooks.run(trx, sent);
    // A receipt the carrier sent before this commit: delivered (or undelivered) now.
    await applyHeldReceipt(trx, lifecycle, sent);
    return true;
  });
}

/** A message that just failed: `sms.failed`, and its owners settle it. */
export async function failed(hooks: SmsOutcomeHooks, trx: Knex, sms: Sms): Promise<void> {
  await emitSmsOutcome(trx, sms);
  await hooks.run(trx, sms);
}
