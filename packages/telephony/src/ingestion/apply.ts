import { emit } from '@switchboard/events';
import { captureCallLead } from '@switchboard/leads';
import {
  CallsStore,
  FINAL_CALL_STATUSES,
  minutesOf,
  newId,
  type Call,
  type CallStatus,
  type Knex,
} from '@switchboard/db';
import { UnknownReceptionistError } from './errors';
import { meterCompletedCall } from '../metering/usage';
import type {
  CallEndedMessage,
  CallMissedMessage,
  CallStartedMessage,
  TelephonyMessage,
} from './messages';
import { applyInboundSms } from './sms-inbound';
import { applySmsStatus } from './sms-status';

export type ApplyResult =
  | { duplicate: true }
  | { duplicate: false; callId: string }
  /** An inbound SMS, and the keyword reply it stored (its send job is the caller's to add). */
  | { duplicate: false; smsId: string; replySmsId: string | null }
  /** A receipt: `ignored` when it moved no message (unknown, another tenant's, repeated, early). */
  | { duplicate: false; receipt: 'applied' | 'ignored' };

type CallMessage = CallStartedMessage | CallEndedMessage | CallMissedMessage;

/** How a call that ended is reported: the end reason tells busy / no answer / failure apart. */
const STATUS_BY_END_REASON: Partial<Record<CallEndedMessage['end_reason'], CallStatus>> = {
  busy: 'busy',
  no_answer: 'no_answer',
  error: 'failed',
  voicemail: 'voicemail',
};

/**
 * Applies one telephony message in one transaction: records its id (a replay is a no-op),
 * writes the call (or the inbound SMS, see `applyInboundSms`), and emits its event through
 * the outbox. Messages may arrive in any order: the call row is created by whichever message
 * comes first, `started_at` is never changed afterwards, and a late `call.started` never
 * moves a finished call back.
 */
export async function applyTelephonyMessage(
  knex: Knex,
  message: TelephonyMessage,
): Promise<ApplyResult> {
  return knex.transaction(async (trx) => {
    // A receipt is never an error to the carrier, whatever receptionist it names.
    if (message.type === 'sms.status') return applySmsStatus(trx, message);
    const receptionist = (await trx('receptionists')
      .where({ id: message.receptionist_id })
      .first('id', 'tenant_id', 'phone_number')) as
      { id: string; tenant_id: string; phone_number: string | null } | undefined;
    if (!receptionist) throw new UnknownReceptionistError(message.receptionist_id);
    const recorded = await trx('telephony_messages')
      .insert({ id: message.id, type: message.type })
      // The id is unique across partitions by telephony_messages' trigger (a replay is skipped).
      .onConflict()
      .ignore()
      .returning('id');
    if (recorded.length === 0) return { duplicate: true };
    if (message.type === 'sms.inbound') {
      const target = {
        id: receptionist.id,
        tenantId: receptionist.tenant_id,
        phoneNumber: receptionist.phone_number,
      };
      return applyInboundSms(trx, target, message);
    }

    const calls = new CallsStore(trx);
    const call = await ensureCall(trx, calls, receptionist.tenant_id, message);
    await trx('telephony_messages').where({ id: message.id }).update({ call_id: call.id });
    const ctx = { trx, calls, call, tenantId: receptionist.tenant_id };
    if (message.type === 'call.started') await started(ctx, message);
    else if (message.type === 'call.ended') await ended(ctx, message);
    else await missed(ctx, message);
    return { duplicate: false, callId: call.id };
  });
}

/**
 * The call the message is about, locked. Created by the first message that mentions it;
 * The uniqueness trigger on (receptionist_id, provider_call_id) makes two first messages
 * racing each other converge on one row (the second insert is skipped).
 */
async function ensureCall(
  trx: Knex,
  calls: CallsStore,
  tenantId: string,
  m: CallMessage,
): Promise<Call> {
  const startedAt = new Date(m.type === 'call.started' ? m.occurred_at : m.started_at);
  await trx('calls')
    .insert({
      id: newId('call'),
      tenant_id: tenantId,
      receptionist_id: m.receptionist_id,
      provider_call_id: m.provider_call_id,
      direction: m.type === 'call.missed' ? 'inbound' : m.direction,
      status: 'ringing',
      from_number: m.from,
      to_number: m.to,
      started_at: startedAt,
    })
    .onConflict()
    .ignore();
  const call = await calls.findByProviderForUpdate(trx, m.receptionist_id, m.provider_call_id);
  if (!call) throw new Error('call row vanished inside its transaction');
  return call;
}

interface Ctx {
  trx: Knex;
  calls: CallsStore;
  call: Call;
  tenantId: string;
}

async function started({ trx, calls, call, tenantId }: Ctx, m: CallStartedMessage) {
  const isFinal = FINAL_CALL_STATUSES.includes(call.status);
  await calls.update(trx, call.id, {
    ...(isFinal ? {} : { status: 'in_progress' as const }),
    customerName: call.customerName ?? m.customer_name ?? null,
  });
  await emit(trx, {
    tenantId,
    receptionistId: call.receptionistId,
    type: 'call.started',
    data: {
      call_id: call.id,
      direction: call.direction,
      from: call.from,
      to: call.to,
      started_at: call.startedAt.toISOString(),
    },
  });
}

async function ended({ trx, calls, call, tenantId }: Ctx, m: CallEndedMessage) {
  const status = STATUS_BY_END_REASON[m.end_reason] ?? 'completed';
  const customerName = m.customer_name ?? call.customerName ?? null;
  const customerPhone = m.customer_phone ?? (m.direction === 'inbound' ? m.from : m.to);
  const endedAt = new Date(m.occurred_at);
  // One end event per call: only the message that ends the call emits `call.completed`; a
  // later `call.ended` (another message id for the same call) updates the call and emits
  // nothing. The call row is locked, so two of them cannot both see it unended.
  const firstEnd = call.endedAt === null;
  // Counted once per call: the marker is set by the update that completes the call, only when
  // not set yet; the call row is locked (ensureCall), so no other message can race this one.
  const minutes =
    status === 'completed' && call.countedMinutes === null ? minutesOf(m.duration_seconds) : null;
  await calls.update(trx, call.id, {
    status,
    ...(minutes !== null ? { countedMinutes: minutes } : {}),
    customerName,
    customerPhone,
    durationSeconds: m.duration_seconds,
    outcome: m.outcome,
    endReason: m.end_reason,
    answeredAt: m.answered_at ? new Date(m.answered_at) : null,
    endedAt,
    transcript: m.transcript ?? null,
    recording: m.recording ?? null,
    booking: m.booking ?? null,
    cost: m.cost ?? null,
  });
  if (firstEnd) await completedEvent(trx, tenantId, call, m, customerName, customerPhone);
  // A caller the assistant captured as a lead becomes one, in this same transaction.
  if (status === 'completed' && call.direction === 'inbound' && m.outcome === 'lead_captured') {
    await captureCallLead(trx, {
      tenantId,
      receptionistId: call.receptionistId,
      callId: call.id,
      phone: customerPhone,
      name: customerName,
    });
  }
  // Last, because it holds the tenant's usage row locked until the commit (see usage.ts).
  if (minutes !== null) {
    await meterCompletedCall(trx, {
      tenantId,
      receptionistId: call.receptionistId,
      endedAt,
      minutes,
    });
  }
}

async function completedEvent(
  trx: Knex,
  tenantId: string,
  call: Call,
  m: CallEndedMessage,
  customerName: string | null,
  customerPhone: string,
) {
  await emit(trx, {
    tenantId,
    receptionistId: call.receptionistId,
    type: 'call.completed',
    data: {
      call_id: call.id,
      direction: call.direction,
      from: call.from,
      to: call.to,
      duration_seconds: m.duration_seconds,
      outcome: m.outcome,
      customer_name: customerName,
      customer_phone: customerPhone,
      transcript_summary: m.transcript?.summary ?? null,
      ...(m.booking ? { booking: m.booking } : {}),
      started_at: call.startedAt.toISOString(),
      ended_at: new Date(m.occurred_at).toISOString(),
    },
  });
}

async function missed({ trx, calls, call, tenantId }: Ctx, m: CallMissedMessage) {
  const endedAt = new Date(m.occurred_at);
  // One end per call, as in ended(): a call.missed for a call that already ended changes
  // nothing (a missed call is not a completed one) and emits nothing.
  if (call.endedAt !== null) return;
  await calls.update(trx, call.id, {
    status: 'missed',
    outcome: 'no_outcome',
    endReason: m.reason === 'abandoned' ? 'abandoned' : 'no_answer',
    endedAt,
    customerPhone: call.customerPhone ?? m.from,
    durationSeconds: Math.max(0, Math.round((endedAt.getTime() - call.startedAt.getTime()) / 1000)),
  });
  await emit(trx, {
    tenantId,
    receptionistId: call.receptionistId,
    type: 'call.missed',
    data: {
      call_id: call.id,
      from: call.from,
      to: call.to,
      missed_at: endedAt.toISOString(),
      recovery_scheduled: m.recovery_scheduled,
    },
  });
}
