/** The SMS domain (docs/API.md, SMS). */

export type SmsDirection = 'inbound' | 'outbound';
/**
 * outbound: scheduled → queued | cancelled; queued → sending → sent → delivered |
 * undelivered; queued | sending → failed. inbound: received. `sending` means claimed by a
 * worker and handed (or about to be handed) to the provider. Statuses only move forward
 * (sms-lifecycle.ts).
 */
export type SmsStatus =
  | 'scheduled'
  | 'queued'
  | 'sending'
  | 'sent'
  | 'delivered'
  | 'undelivered'
  | 'failed'
  | 'cancelled'
  | 'received';

/** A reply the SMS path sends on its own to an inbound keyword. */
export type SmsReplyKind = 'opt_out' | 'opt_in' | 'help';

/** A carrier's delivery receipt for an outbound message (telephony ingestion, `sms.status`). */
export interface SmsReceipt {
  receptionistId: string;
  providerMessageId: string;
  status: 'delivered' | 'undelivered';
  errorCode: string | null;
  occurredAt: Date;
}

export interface Sms {
  id: string;
  tenantId: string;
  receptionistId: string;
  direction: SmsDirection;
  status: SmsStatus;
  from: string;
  to: string;
  message: string;
  segments: number;
  campaignId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  metadata: Record<string, string>;
  providerMessageId: string | null;
  createdAt: Date;
  sentAt: Date | null;
  receivedAt: Date | null;
  /** When a scheduled message is (or was) due to go; null when sent at once. */
  sendAt: Date | null;
  deliveredAt: Date | null;
  /** When it failed, was reported undelivered, or was cancelled. */
  failedAt: Date | null;
  replyKind: SmsReplyKind | null;
  /** The body fingerprint stored with the message's Idempotency-Key; null without a key. */
  idempotencyFingerprint: string | null;
  /**
   * false: a test-mode message (made with a test-mode key, or by a test campaign): sent by
   * the simulated carrier only, never metered, seen by test-mode keys only (docs/API.md,
   * Test mode). Inbound messages and keyword replies are live.
   */
  livemode: boolean;
}

/** What POST /sms/send stores before it answers 202. */
export interface NewOutboundSms {
  tenantId: string;
  /** The receptionist to send from; its phone number becomes `from`. */
  receptionistId: string;
  to: string;
  message: string;
  segments: number;
  metadata: Record<string, string>;
  campaignId?: string | null;
  /** Later than now: the message is stored `scheduled` and queued when it is due. */
  sendAt?: Date | null;
  /** A keyword reply; an `opt_out` reply goes to the number that just opted out. */
  replyKind?: SmsReplyKind | null;
  /** The Idempotency-Key and the fingerprint of the request body that first used it. */
  idempotency: { key: string; fingerprint: string } | null;
  at: Date;
  /** false: a test-mode message (default: live). */
  livemode?: boolean;
}

/** An inbound message as ingestion stores it (`received`). */
export interface NewInboundSms {
  tenantId: string;
  receptionistId: string;
  providerMessageId: string;
  from: string;
  to: string;
  message: string;
  segments: number;
  receivedAt: Date;
}

export interface SmsFilters {
  /** The messages of one mode (the API always gives its key's: docs/API.md, Test mode). */
  livemode?: boolean;
  direction?: SmsDirection;
  /** Inclusive lower bound on created_at. */
  from?: Date;
  /** Exclusive upper bound on created_at. */
  toExclusive?: Date;
}

/** Why a send was not stored, when no message holds its Idempotency-Key. */
export type SendRefusal = 'unknown_receptionist' | 'receptionist_not_ready' | 'recipient_opted_out';

/** The message shown beside each error code (docs/API.md, SMS); unknown carrier codes get a generic one. */
const ERROR_MESSAGES: Record<string, string> = {
  carrier_rejected: 'The carrier refused the message',
  provider_error: 'The SMS provider failed to take the message',
  recipient_opted_out: 'The recipient opted out (replied STOP) before the message was sent',
  send_interrupted:
    'The sending worker stopped during the hand-off; whether the carrier got it is unknown',
  unreachable_handset: 'The carrier could not reach the handset',
};

export const smsErrorMessage = (code: string): string =>
  ERROR_MESSAGES[code] ?? `The carrier reported the message undelivered (${code})`;
