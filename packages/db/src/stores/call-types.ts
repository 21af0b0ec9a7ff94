/** The call domain (docs/API.md, Calls). */
import type { Booking } from './booking';

export type { Booking } from './booking';

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
/** What a call achieved (the enum of `outcome` in the API's document and events). */
export const CALL_OUTCOMES = [
  'booked',
  'lead_captured',
  'message_taken',
  'transferred',
  'information_provided',
  'spam',
  'no_outcome',
] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];
/** Why a call ended (the enum of `end_reason` in the API's document). */
export const END_REASONS = [
  'caller_hangup',
  'agent_hangup',
  'transferred',
  'voicemail',
  'no_answer',
  'busy',
  'max_duration',
  'abandoned',
  'error',
] as const;
export type EndReason = (typeof END_REASONS)[number];

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
/** Every status, in the order of a call's life: the ones still in progress, then the final ones. */
export const CALL_STATUSES: readonly CallStatus[] = [
  'queued',
  'ringing',
  'in_progress',
  ...FINAL_CALL_STATUSES,
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
  /**
   * The minutes this call added to usage, set once by the transaction that counted it (null:
   * not counted). Internal: never rendered.
   */
  countedMinutes: number | null;
  /**
   * false: a test-mode call (made with a test-mode key): dialled by the simulator only, never
   * metered, seen by test-mode keys only (docs/API.md, Test mode).
   */
  livemode: boolean;
  createdAt: Date;
}

/** What a call list shows: no transcript, recording, cost or metadata payloads. */
export type CallSummary = Pick<
  Call,
  | 'id'
  | 'tenantId'
  | 'receptionistId'
  | 'receptionistName'
  | 'direction'
  | 'status'
  | 'from'
  | 'to'
  | 'customerName'
  | 'durationSeconds'
  | 'outcome'
  | 'startedAt'
  | 'endedAt'
  | 'booking'
  | 'livemode'
> & { hasTranscript: boolean; hasRecording: boolean };

/** The writable columns of a call, as the domain names them. */
export type CallFields = Partial<
  Omit<Call, 'id' | 'tenantId' | 'receptionistId' | 'receptionistName' | 'createdAt'>
>;

export interface CallFilters {
  /** The calls of one mode (the API always gives its key's: docs/API.md, Test mode). */
  livemode?: boolean;
  receptionistId?: string;
  direction?: CallDirection;
  status?: CallStatus;
  /** Inclusive lower bound on started_at. */
  from?: Date;
  /** Exclusive upper bound on started_at. */
  toExclusive?: Date;
}

/** What POST /calls/outbound stores before it answers 202. */
export interface NewOutboundCall {
  tenantId: string;
  /** The receptionist to call from; its phone number becomes `from`. */
  receptionistId: string;
  to: string;
  customerName: string | null;
  purpose: string | null;
  metadata: Record<string, string>;
  /** The Idempotency-Key and the fingerprint of the request body that first used it. */
  idempotency: { key: string; fingerprint: string } | null;
  /** Becomes both started_at and created_at. */
  at: Date;
  /** false: made with a test-mode key (default: live). */
  livemode?: boolean;
}

/** The fields of an accepted outbound call that never change after the insert. */
export interface AcceptedOutboundCall {
  id: string;
  receptionistId: string;
  from: string;
  to: string;
  createdAt: Date;
  /** The body fingerprint stored with the call's Idempotency-Key; null without a key. */
  idempotencyFingerprint: string | null;
  livemode: boolean;
}
