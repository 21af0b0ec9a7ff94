/** The call domain (CONTRACT.md section 5). */

export type CallDirection = 'inbound' | 'outbound';
export type CallStatus =
  | 'queued'
  | 'ringing'
  | 'in_progress'
  | 'completed'
  | 'missed'
  | 'no_answer'
  | 'busy'
  | 'failed'
  | 'canceled'
  | 'voicemail';
export type CallOutcome =
  | 'booked'
  | 'lead_captured'
  | 'message_taken'
  | 'transferred'
  | 'information_provided'
  | 'spam'
  | 'no_outcome';
export type EndReason =
  | 'caller_hangup'
  | 'agent_hangup'
  | 'transferred'
  | 'voicemail'
  | 'no_answer'
  | 'busy'
  | 'max_duration'
  | 'abandoned'
  | 'error';

export const CALL_STATUSES: readonly CallStatus[] = [
  'queued',
  'ringing',
  'in_progress',
  'completed',
  'missed',
  'no_answer',
  'busy',
  'failed',
  'canceled',
  'voicemail',
];
/** Statuses after which nothing more happens on the phone. */
export const FINAL_CALL_STATUSES: readonly CallStatus[] = [
  'completed',
  'missed',
  'no_answer',
  'busy',
  'failed',
  'canceled',
  'voicemail',
];

export interface TranscriptTurn {
  role: 'assistant' | 'customer';
  text: string;
  offset_seconds: number;
}
export interface Transcript {
  summary: string;
  turns: TranscriptTurn[];
}
export interface Recording {
  url: string;
  duration_seconds: number;
  format: string;
}
export interface Booking {
  confirmation: string;
  date: string;
  time: string;
  service_type: string;
  address: string;
}
export interface Cost {
  currency: 'USD';
  total: number;
  breakdown: { telephony: number; ai: number; sms: number };
}

export interface Call {
  id: string;
  tenantId: string;
  receptionistId: string;
  receptionistName: string;
  providerCallId: string | null;
  direction: CallDirection;
  status: CallStatus;
  from: string;
  to: string;
  customerName: string | null;
  customerPhone: string | null;
  durationSeconds: number | null;
  outcome: CallOutcome | null;
  endReason: EndReason | null;
  startedAt: Date;
  answeredAt: Date | null;
  endedAt: Date | null;
  transcript: Transcript | null;
  recording: Recording | null;
  booking: Booking | null;
  cost: Cost | null;
  metadata: Record<string, string>;
  purpose: string | null;
  createdAt: Date;
}

/** The writable columns of a call, as the domain names them. */
export type CallFields = Partial<
  Omit<Call, 'id' | 'tenantId' | 'receptionistId' | 'receptionistName' | 'createdAt'>
>;

export interface CallFilters {
  receptionistId?: string;
  direction?: CallDirection;
  status?: CallStatus;
  /** Inclusive lower bound on started_at. */
  from?: Date;
  /** Exclusive upper bound on started_at. */
  toExclusive?: Date;
}
