import { emit } from '@switchboard/events';
import { captureCallLead } from '@switchboard/leads';
import {
  minutesOf,
  type Call,
  type CallEndStatus,
  type Db,
  type Knex,
  type Stores,
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
const STATUS_BY_END_REASON: Partial<Record<CallEndedMessage['end_reason'], CallEndStatus>> = {
  busy: 'busy',
  no_answer: 'no_answer',
  error: 'failed',
  voicemail: 'voicemail',
};

/**
 * Applies one telephony message in one transaction: records its id (a replay is a no-op),
 * moves the call through its lifecycle (CallLifecycle, packages/db; or stores the inbound
 * SMS, see `applyInboundSms`), and emits its event through the outbox. Messages may arrive in any order: the call row is created by whichever message
 * comes first, `started_at` is never changed afterwards, and a late `call.started` never
 * moves a finished call back.
 */
export async function applyTelephonyMessage(
  { knex, stores }: Db,
  message: TelephonyMessage,
): Promise<ApplyResult> {
  return knex.transaction(async (trx) => {
    // A receipt is never an error to the carrier, whatever receptionist it names.
    if (message.type === 'sms.status') return applySmsStatus(trx, stores, message);
    const receptionist = await stores.receptionists.reportTarget(trx, message.receptionist_id);
    if (!receptionist) throw new UnknownReceptionistError(message.receptionist_id);
    if (!(await stores.telephonyMessages.record(trx, message))) return { duplicate: true };
    if (message.type === 'sms.inbound') return applyInboundSms(trx, stores, receptionist, message);

    const call = await ensureCall(trx, stores, receptionist.tenantId, message);
    await stores.telephonyMessages.attachCall(trx, message.id, call.id);
    const ctx = { trx, stores, call, tenantId: receptionist.tenantId };
    if (message.type === 'call.started') await started(ctx, message);
    else if (message.type === 'call.ended') await ended(ctx, message);
    else await missed(ctx, message);
    return { duplicate: false, callId: call.id };
  });
}

/**
 * The call the message is about, locked. Created by the first message that mentions it
 * (two first messages racing each other converge on one row: `insertReported`).
 */
async function ensureCall(
  trx: Knex,
  { calls, callLifecycle }: Stores,
  tenantId: string,
  m: CallMessage,
): Promise<Call> {
  await callLifecycle.insertReported(trx, {
    tenantId,
    receptionistId: m.receptionist_id,
    providerCallId: m.provider_call_id,
    direction: m.type === 'call.missed' ? 'inbound' : m.direction,
    from: m.from,
    to: m.to,
    startedAt: new Date(m.type === 'call.started' ? m.occurred_at : m.started_at),
  });
  const call = await calls.findByProviderForUpdate(trx, m.receptionist_id, m.provider_call_id);
  if (!call) throw new Error('call row vanished inside its transaction');
  return call;
}

interface Ctx {
  trx: Knex;
  stores: Stores;
  call: Call;
  tenantId: string;
}

async function started({ trx, stores, call, tenantId }: Ctx, m: CallStartedMessage) {
  await stores.callLifecycle.start(trx, call, {
    customerName: call.customerName ?? m.customer_name ?? null,
  });
  await emit(trx, {
    tenantId,
    receptionistId: call.receptionistId,
    livemode: call.livemode,
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

async function ended({ trx, stores, call, tenantId }: Ctx, m: CallEndedMessage) {
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
  // A test-mode call is never metered (docs/API.md, Test mode).
  const minutes =
    status === 'completed' && call.livemode && call.countedMinutes === null
      ? minutesOf(m.duration_seconds)
      : null;
  await stores.callLifecycle.end(trx, call.id, status, {
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
    await captureCallLead(trx, stores.leads, {
      tenantId,
      receptionistId: call.receptionistId,
      callId: call.id,
      phone: customerPhone,
      name: customerName,
      livemode: call.livemode,
    });
  }
  // Last, because it holds the tenant's usage row locked until the commit (see usage.ts).
  if (minutes !== null) {
    await meterCompletedCall(trx, stores.usage, {
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
    livemode: call.livemode,
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

async function missed({ trx, stores, call, tenantId }: Ctx, m: CallMissedMessage) {
  const endedAt = new Date(m.occurred_at);
  // One end per call, as in ended(): a call.missed for a call that already ended changes
  // nothing (a missed call is not a completed one) and emits nothing.
  if (call.endedAt !== null) return;
  await stores.callLifecycle.miss(trx, call.id, {
    outcome: 'no_outcome',
    endReason: m.reason === 'abandoned' ? 'abandoned' : 'no_answer',
    endedAt,
    customerPhone: call.customerPhone ?? m.from,
    durationSeconds: Math.max(0, Math.round((endedAt.getTime() - call.startedAt.getTime()) / 1000)),
  });
  await emit(trx, {
    tenantId,
    receptionistId: call.receptionistId,
    livemode: call.livemode,
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
