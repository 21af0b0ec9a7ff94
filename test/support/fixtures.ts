import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { CallLifecycle, CallsStore, type CallFields } from '@switchboard/db';

let seq = 0;
const phone = () => `+1415555${String(1000 + (seq++ % 9000)).padStart(4, '0')}`;
export const uid = () => randomBytes(6).toString('hex');

/** Inserts calls directly (no events): for list and pagination tests. */
export async function insertCalls(
  knex: Knex,
  tenantId: string,
  receptionistId: string,
  count: number,
  make: (i: number) => CallFields & { startedAt: Date },
): Promise<string[]> {
  const store = new CallsStore(knex, new CallLifecycle());
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const fields = make(i);
    ids.push(
      await store.insert(knex, {
        tenantId,
        receptionistId,
        direction: 'inbound',
        status: 'completed',
        from: phone(),
        to: phone(),
        ...fields,
      }),
    );
  }
  return ids;
}

export const transcript = {
  summary: 'Caller booked a boiler service for Tuesday morning.',
  turns: [
    { role: 'assistant' as const, text: 'Thanks for calling, how can I help?', offset_seconds: 0 },
    { role: 'customer' as const, text: 'My boiler needs a service.', offset_seconds: 2.5 },
  ],
};
export const booking = {
  confirmation: 'BK-1042',
  date: '2026-11-24',
  time: '09:30',
  service_type: 'Boiler service',
  address: '12 Elm Street, Springfield',
};
export const recording = {
  url: 'https://recordings.example.com/rec_1.mp3',
  duration_seconds: 95,
  format: 'mp3',
};
export const cost = {
  currency: 'USD' as const,
  total: 0.42,
  breakdown: { telephony: 0.12, ai: 0.3, sms: 0 },
};

/** Telephony messages as the voice platform sends them (docs/API.md, Telephony ingestion). */
export const messages = {
  started: (receptionistId: string, providerCallId: string, at: string) => ({
    id: `msg_${uid()}`,
    type: 'call.started',
    receptionist_id: receptionistId,
    provider_call_id: providerCallId,
    direction: 'inbound',
    from: '+14155550100',
    to: '+14155550199',
    customer_name: 'Dana Whitfield',
    occurred_at: at,
  }),
  ended: (receptionistId: string, providerCallId: string, startedAt: string, endedAt: string) => ({
    id: `msg_${uid()}`,
    type: 'call.ended',
    receptionist_id: receptionistId,
    provider_call_id: providerCallId,
    direction: 'inbound',
    from: '+14155550100',
    to: '+14155550199',
    customer_name: 'Dana Whitfield',
    customer_phone: '+14155550100',
    started_at: startedAt,
    answered_at: startedAt,
    occurred_at: endedAt,
    duration_seconds: 95,
    outcome: 'booked',
    end_reason: 'caller_hangup',
    transcript,
    recording,
    booking,
    cost,
  }),
  missed: (receptionistId: string, providerCallId: string, startedAt: string, at: string) => ({
    id: `msg_${uid()}`,
    type: 'call.missed',
    receptionist_id: receptionistId,
    provider_call_id: providerCallId,
    from: '+14155550100',
    to: '+14155550199',
    started_at: startedAt,
    occurred_at: at,
    reason: 'abandoned',
    recovery_scheduled: true,
  }),
  smsInbound: (
    receptionistId: string,
    to: string,
    message: string,
    opts: { from?: string; at?: string; providerMessageId?: string } = {},
  ) => ({
    id: `msg_${uid()}`,
    type: 'sms.inbound',
    receptionist_id: receptionistId,
    provider_message_id: opts.providerMessageId ?? `SM${uid()}`,
    from: opts.from ?? '+14155550100',
    to,
    message,
    occurred_at: opts.at ?? new Date().toISOString(),
  }),
};
