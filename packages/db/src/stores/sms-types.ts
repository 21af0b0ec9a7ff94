/** The SMS domain (docs/API.md, SMS). */

export type SmsDirection = 'inbound' | 'outbound';
/**
 * outbound: queued → sending → sent | failed; inbound: received. `sending` means claimed by
 * a worker and handed (or about to be handed) to the provider: internal, shown as `queued`.
 */
export type SmsStatus = 'queued' | 'sending' | 'sent' | 'failed' | 'received';

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
  metadata: Record<string, string>;
  providerMessageId: string | null;
  createdAt: Date;
  sentAt: Date | null;
  receivedAt: Date | null;
  /** The body fingerprint stored with the message's Idempotency-Key; null without a key. */
  idempotencyFingerprint: string | null;
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
  /** The Idempotency-Key and the fingerprint of the request body that first used it. */
  idempotency: { key: string; fingerprint: string } | null;
  at: Date;
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
  direction?: SmsDirection;
  /** Inclusive lower bound on created_at. */
  from?: Date;
  /** Exclusive upper bound on created_at. */
  toExclusive?: Date;
}

/** Why a send was not stored, when no message holds its Idempotency-Key. */
export type SendRefusal = 'unknown_receptionist' | 'receptionist_not_ready' | 'recipient_opted_out';
