import { emit } from '@switchboard/events';
import { newId, type Knex, type Stores } from '@switchboard/db';
import { safeSmsText, smsKeyword, smsReplyText, smsSegments } from '@switchboard/sms';
import { NumberNotOwnedError } from './errors';
import type { SmsInboundMessage } from './messages';

/** The receptionist an inbound message names, as ingestion loaded it. */
export interface InboundTarget {
  id: string;
  tenantId: string;
  phoneNumber: string | null;
}

/**
 * Applies `sms.inbound` inside ingestion's transaction (its message id is already recorded):
 * stores the message `received`, keeps the tenant's opt-out list (a STOP-family keyword opts
 * the sender out, START / UNSTOP / YES back in), stores the keyword's reply (confirmation,
 * re-subscribe or help) as a queued outbound message, and emits `sms.received`, all or
 * nothing. Invariant: at most one reply per inbound message, because the reply is stored in
 * the transaction that stores the inbound message, and a message delivered twice (same
 * ingestion id, or same carrier id) stores nothing the second time. The caller adds the
 * reply's send job after the commit (the SMS reconciler adds it if that is lost).
 * The carrier's text is made storable first (no NUL, no unpaired surrogate).
 */
export async function applyInboundSms(
  trx: Knex,
  stores: Stores,
  receptionist: InboundTarget,
  m: SmsInboundMessage,
): Promise<{ duplicate: true } | { duplicate: false; smsId: string; replySmsId: string | null }> {
  if (receptionist.phoneNumber !== m.to) throw new NumberNotOwnedError(receptionist.id, m.to);
  const message = safeSmsText(m.message);
  const keyword = smsKeyword(message);
  const receivedAt = new Date(m.occurred_at);
  const lifecycle = stores.smsLifecycle;
  const sms = await lifecycle.insertInbound(trx, {
    tenantId: receptionist.tenantId,
    receptionistId: receptionist.id,
    providerMessageId: m.provider_message_id,
    from: m.from,
    to: m.to,
    message,
    segments: smsSegments(message).segments,
    receivedAt,
  });
  if (!sms) return { duplicate: true };
  // Counted in the transaction that stores it, so usage holds it once its 202 is sent.
  await stores.usage.countSms(trx, {
    tenantId: receptionist.tenantId,
    receptionistId: receptionist.id,
    at: receivedAt,
    direction: 'inbound',
  });
  if (keyword === 'opt_out' || keyword === 'opt_in') {
    await stores.smsOptOuts.record(trx, {
      tenantId: receptionist.tenantId,
      phone: m.from,
      optedOut: keyword === 'opt_out',
      keyword: message.toUpperCase().replace(/[^A-Z]/g, ''),
      at: receivedAt,
      smsId: sms.id,
    });
  }
  let replySmsId: string | null = null;
  if (keyword) {
    const text = smsReplyText(keyword, await stores.tenants.smsReplies(trx, sms.tenantId));
    // Refused (nothing stored) when the sender opted out: only the STOP confirmation goes
    // to a number that opted out.
    const reply = await lifecycle.insertOutbound(trx, newId('sms'), {
      tenantId: sms.tenantId,
      receptionistId: sms.receptionistId,
      to: sms.from,
      message: text,
      segments: smsSegments(text).segments,
      metadata: {},
      replyKind: keyword,
      idempotency: null,
      at: new Date(),
    });
    replySmsId = reply?.id ?? null;
  }
  await emit(trx, {
    tenantId: receptionist.tenantId,
    receptionistId: receptionist.id,
    type: 'sms.received',
    data: {
      sms_id: sms.id,
      from: sms.from,
      to: sms.to,
      message,
      received_at: receivedAt.toISOString(),
      is_opt_out: keyword === 'opt_out',
    },
  });
  return { duplicate: false, smsId: sms.id, replySmsId };
}
