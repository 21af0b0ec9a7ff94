import type { AcceptedOutboundCall, Call, CallFields, CallSummary } from './call-types';

// Row shapes and mappers of the calls table, kept out of calls-store.ts so the store reads as
// its queries. Row types never leave the db package.

export interface CallRow {
  id: string;
  tenant_id: string;
  receptionist_id: string;
  receptionist_name: string;
  provider_call_id: string | null;
  direction: Call['direction'];
  status: Call['status'];
  from_number: string;
  to_number: string;
  customer_name: string | null;
  customer_phone: string | null;
  duration_seconds: number | null;
  outcome: Call['outcome'];
  end_reason: Call['endReason'];
  started_at: Date;
  answered_at: Date | null;
  ended_at: Date | null;
  transcript: Call['transcript'];
  recording: Call['recording'];
  booking: Call['booking'];
  cost: Call['cost'];
  metadata: Call['metadata'];
  purpose: string | null;
  counted_minutes: number | null;
  livemode: boolean;
  created_at: Date;
}

export const toCall = (r: CallRow): Call => ({
  id: r.id,
  tenantId: r.tenant_id,
  receptionistId: r.receptionist_id,
  receptionistName: r.receptionist_name,
  providerCallId: r.provider_call_id,
  direction: r.direction,
  status: r.status,
  from: r.from_number,
  to: r.to_number,
  customerName: r.customer_name,
  customerPhone: r.customer_phone,
  durationSeconds: r.duration_seconds,
  outcome: r.outcome,
  endReason: r.end_reason,
  startedAt: r.started_at,
  answeredAt: r.answered_at,
  endedAt: r.ended_at,
  transcript: r.transcript,
  recording: r.recording,
  booking: r.booking,
  cost: r.cost,
  metadata: r.metadata,
  purpose: r.purpose,
  countedMinutes: r.counted_minutes,
  livemode: r.livemode,
  createdAt: r.created_at,
});

export type SummaryRow = Pick<
  CallRow,
  | 'id'
  | 'tenant_id'
  | 'receptionist_id'
  | 'receptionist_name'
  | 'direction'
  | 'status'
  | 'from_number'
  | 'to_number'
  | 'customer_name'
  | 'duration_seconds'
  | 'outcome'
  | 'started_at'
  | 'ended_at'
  | 'booking'
  | 'livemode'
> & { has_transcript: boolean; has_recording: boolean };

export const toSummary = (r: SummaryRow): CallSummary => ({
  id: r.id,
  tenantId: r.tenant_id,
  receptionistId: r.receptionist_id,
  receptionistName: r.receptionist_name,
  direction: r.direction,
  status: r.status,
  from: r.from_number,
  to: r.to_number,
  customerName: r.customer_name,
  durationSeconds: r.duration_seconds,
  outcome: r.outcome,
  startedAt: r.started_at,
  endedAt: r.ended_at,
  booking: r.booking,
  hasTranscript: r.has_transcript,
  hasRecording: r.has_recording,
  livemode: r.livemode,
});

export const COLUMN: Record<keyof CallFields, string> = {
  providerCallId: 'provider_call_id',
  direction: 'direction',
  status: 'status',
  from: 'from_number',
  to: 'to_number',
  customerName: 'customer_name',
  customerPhone: 'customer_phone',
  durationSeconds: 'duration_seconds',
  outcome: 'outcome',
  endReason: 'end_reason',
  startedAt: 'started_at',
  answeredAt: 'answered_at',
  endedAt: 'ended_at',
  transcript: 'transcript',
  recording: 'recording',
  booking: 'booking',
  cost: 'cost',
  metadata: 'metadata',
  purpose: 'purpose',
  countedMinutes: 'counted_minutes',
  livemode: 'livemode',
};
export const JSON_FIELDS = new Set(['transcript', 'recording', 'booking', 'cost', 'metadata']);

/** The immutable columns of an accepted outbound call (what a 202 replay is built from). */
export const ACCEPTED_COLUMNS = [
  'id',
  'receptionist_id',
  'from_number',
  'to_number',
  'created_at',
  'idempotency_fingerprint',
  'livemode',
];
export type AcceptedRow = Pick<
  CallRow,
  'id' | 'receptionist_id' | 'from_number' | 'to_number' | 'livemode'
> & {
  created_at: Date;
  idempotency_fingerprint: string | null;
};
export const toAccepted = (r: AcceptedRow): AcceptedOutboundCall => ({
  id: r.id,
  receptionistId: r.receptionist_id,
  from: r.from_number,
  to: r.to_number,
  createdAt: r.created_at,
  idempotencyFingerprint: r.idempotency_fingerprint,
  livemode: r.livemode,
});

/** Domain fields → column values; JSON columns are serialised explicitly for pg. */
export function callColumns(fields: CallFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const column = COLUMN[key as keyof CallFields];
    out[column] = JSON_FIELDS.has(key) && value !== null ? JSON.stringify(value) : value;
  }
  return out;
}
