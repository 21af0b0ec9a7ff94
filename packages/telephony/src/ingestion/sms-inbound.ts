import { emit } from '@switchboard/events';
import { SmsOptOutsStore, SmsStore, UsageStore, type Knex } from '@switchboard/db';
import { NumberNotOwnedError } from './errors';
import type { SmsInboundMessage } from './messages';
import { safeSmsText, smsKeyword, smsSegments } from '../text/sms-text';

/** The receptionist an inbound message names, as ingestion loaded it. */
export interface InboundTarget {
  id: string;
  tenantId: string;
  phoneNumber: string | null;
}

/**
 * Applies `sms.inbound` inside ingestion's transaction (its message id is already recorded):
 * stores the message `received`, keeps the tenant's opt-out list (a STOP-family keyword opts
 * the sender out, START / UNSTOP / YES back in) and emits `sms.received`, all or nothing.
 * The carrier's text is made storable first (no NUL, no unpaired surrogate). A message the
 * carrier reports twice under two message ids is stored once: the second is a duplicate.
 */
export async function applyInboundSms(
  trx: Knex,
  receptionist: InboundTarget,
  m: SmsInboundMessage,
): Promise<{ duplicate: true } | { duplicate: false; smsId: string }> {
  if (receptionist.phoneNumber !== m.to) throw new NumberNotOwnedError(receptionist.id, m.to);
  const message = safeSmsText(m.message);
  const keyword = smsKeyword(message);
  const receivedAt = new Date(m.occurred_at);
  const sms = await new SmsStore(trx).insertInbound(trx, {
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
  await new UsageStore(trx).countSms(trx, {
    tenantId: receptionist.tenantId,
    receptionistId: receptionist.id,
    at: receivedAt,
    direction: 'inbound',
  });
  if (keyword) {
    await new SmsOptOutsStore(trx).record(trx, {
      tenantId: receptionist.tenantId,
      phone: m.from,
      optedOut: keyword === 'opt_out',
      at: receivedAt,
      smsId: sms.id,
    });
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
  return { duplicate: false, smsId: sms.id };
}
