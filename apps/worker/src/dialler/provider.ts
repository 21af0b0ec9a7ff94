import type { CallEndedMessage, CallStartedMessage } from '@switchboard/telephony';

/** One outbound call the dialler asks a provider to place. */
export interface DialRequest {
  callId: string;
  /**
   * The provider_call_id stored on the call when the dialler claimed it, before `dial` is
   * called. Every report about this call must carry it: that is how ingestion finds the row.
   */
  providerCallId: string;
  receptionistId: string;
  receptionistName: string;
  /** The receptionist's number: the caller id the customer sees. */
  from: string;
  /** The customer's number (E.164). */
  to: string;
  customerName: string | null;
  /** What the call is about, for the assistant. */
  purpose: string | null;
  metadata: Record<string, string>;
  /** When the call was accepted (the call's started_at, which never changes). */
  startedAt: Date;
}

/**
 * Feeds one telephony message into ingestion's single code path (`applyTelephonyMessage`):
 * the call row, the call detail and the `call.started` / `call.completed` outbox events are
 * then exactly those of a call reported by the voice platform.
 */
export type TelephonyReport = (message: CallStartedMessage | CallEndedMessage) => Promise<void>;

/**
 * Places outbound calls. The dialler claims a queued call (queued → ringing, storing
 * `providerCallId(callId)`) and then calls `dial` at most once for it; what happens on the
 * phone is reported as telephony messages (docs/API.md, Telephony ingestion):
 * - answered: `call.started` when the customer picks up, `call.ended` when the call is over
 *   (with transcript, recording, booking, cost when there are any);
 * - not connected: only `call.ended` with `end_reason` `busy`, `no_answer` or `error`,
 *   `outcome` `no_outcome` and `duration_seconds` 0 (status busy / no_answer / failed).
 *
 * A provider either reports through `report` itself (the built-in simulator) or has its
 * platform send the same messages to `POST /internal/v1/telephony/events` later. `dial`
 * should return as soon as the call is placed: it runs inside a worker slot. If it throws,
 * the dialler reports the call as failed (the claim is spent; it is never dialled again).
 * How to add a real provider (Twilio): docs/TELEPHONY.md.
 */
export interface TelephonyProvider {
  readonly name: string;
  /** The provider_call_id to store with the claim (the provider must report with it). */
  providerCallId(callId: string): string;
  dial(request: DialRequest, report: TelephonyReport): Promise<void>;
  /** Releases clients and timers; called once when the worker stops. */
  close(): Promise<void>;
}
