import { emit } from '@switchboard/events';
import type { Knex, Sms, SmsLifecycle, SmsReceipt } from '@switchboard/db';

/**
 * The events of SMS outcomes (docs/API.md, SMS), in the message's mode (a test-mode message's
 * reach test-mode subscriptions only: docs/API.md, Test mode), emitted in the transaction of the
 * lifecycle transition they report, by whichever code path made it: the sender (sent, failed),
 * ingestion (receipts), the reconciler (interrupted sends, held receipts).
 */
export async function emitSmsSent(db: Knex, sms: Sms): Promise<void> {
  if (!sms.sentAt) throw new Error(`SMS ${sms.id} has no sent_at`);
  await emit(db, {
    tenantId: sms.tenantId,
    receptionistId: sms.receptionistId,
    livemode: sms.livemode,
    type: 'sms.sent',
    data: {
      sms_id: sms.id,
      from: sms.from,
      to: sms.to,
      message: sms.message,
      sent_at: sms.sentAt.toISOString(),
      campaign_id: sms.campaignId,
    },
  });
}

/** `sms.delivered` for a delivered message, `sms.failed` for a failed or undelivered one. */
export async function emitSmsOutcome(db: Knex, sms: Sms): Promise<void> {
  const base = {
    tenantId: sms.tenantId,
    receptionistId: sms.receptionistId,
    livemode: sms.livemode,
  };
  if (sms.status === 'delivered') {
    await emit(db, {
      ...base,
      type: 'sms.delivered',
      data: {
        sms_id: sms.id,
        from: sms.from,
        to: sms.to,
        delivered_at: (sms.deliveredAt ?? new Date()).toISOString(),
        campaign_id: sms.campaignId,
      },
    });
    return;
  }
  if (sms.status !== 'failed' && sms.status !== 'undelivered') return;
  await emit(db, {
    ...base,
    type: 'sms.failed',
    data: {
      sms_id: sms.id,
      from: sms.from,
      to: sms.to,
      status: sms.status,
      error_code: sms.errorCode ?? 'unknown',
      error_message: sms.errorMessage ?? 'The message was not delivered',
      failed_at: (sms.failedAt ?? new Date()).toISOString(),
      campaign_id: sms.campaignId,
    },
  });
}

/**
 * Applies a carrier receipt in the caller's transaction: sent → delivered | undelivered with
 * its event. A receipt that finds no sent message is held (it may be early: the worker has
 * not recorded `sent` yet) and applied when the message is marked sent; one for a message
 * already delivered or undelivered, or for no message of this receptionist, is held and
 * changes nothing. Returns the message it moved, if any.
 */
export async function applySmsReceipt(
  db: Knex,
  lifecycle: SmsLifecycle,
  receipt: SmsReceipt,
): Promise<Sms | undefined> {
  const moved = await lifecycle.applyReceipt(db, receipt);
  if (!moved) {
    await lifecycle.holdReceipt(db, receipt);
    return undefined;
  }
  await emitSmsOutcome(db, moved);
  return moved;
}

/** After `markSent`: the receipt that came before it, applied now (see `applySmsReceipt`). */
export async function applyHeldReceipt(
  db: Knex,
  lifecycle: SmsLifecycle,
  sent: Sms,
): Promise<Sms | undefined> {
  const held = await lifecycle.takeHeldReceipt(db, sent);
  if (!held) return undefined;
  const moved = await lifecycle.applyReceipt(db, held);
  if (moved) await emitSmsOutcome(db, moved);
  return moved;
}
