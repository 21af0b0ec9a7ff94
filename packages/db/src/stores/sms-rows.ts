import type { Sms } from './sms-types';

// Row shape and mapper of the sms_messages table. Row types never leave the db package.

export interface SmsRow {
  id: string;
  tenant_id: string;
  receptionist_id: string;
  direction: Sms['direction'];
  status: Sms['status'];
  from_number: string;
  to_number: string;
  message: string;
  segments: number;
  campaign_id: string | null;
  error_code: string | null;
  error_message: string | null;
  metadata: Record<string, string>;
  provider_message_id: string | null;
  created_at: Date;
  sent_at: Date | null;
  received_at: Date | null;
  idempotency_fingerprint: string | null;
  send_at: Date | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  reply_kind: Sms['replyKind'];
  livemode: boolean;
}

/** Named explicitly (no `*`): a later column does not change what a statement returns. */
export const SMS_COLUMNS = [
  'id',
  'tenant_id',
  'receptionist_id',
  'direction',
  'status',
  'from_number',
  'to_number',
  'message',
  'segments',
  'campaign_id',
  'error_code',
  'metadata',
  'provider_message_id',
  'created_at',
  'sent_at',
  'received_at',
  'idempotency_fingerprint',
  'error_message',
  'send_at',
  'delivered_at',
  'failed_at',
  'reply_kind',
  'livemode',
] as const;

/** The column list for raw SQL, qualified by `alias` when given. */
export const smsColumnList = (alias?: string): string =>
  SMS_COLUMNS.map((c) => (alias ? `${alias}.${c}` : c)).join(', ');

export const toSms = (r: SmsRow): Sms => ({
  id: r.id,
  tenantId: r.tenant_id,
  receptionistId: r.receptionist_id,
  direction: r.direction,
  status: r.status,
  from: r.from_number,
  to: r.to_number,
  message: r.message,
  segments: r.segments,
  campaignId: r.campaign_id,
  errorCode: r.error_code,
  errorMessage: r.error_message,
  metadata: r.metadata,
  providerMessageId: r.provider_message_id,
  createdAt: r.created_at,
  sentAt: r.sent_at,
  receivedAt: r.received_at,
  idempotencyFingerprint: r.idempotency_fingerprint,
  sendAt: r.send_at,
  deliveredAt: r.delivered_at,
  failedAt: r.failed_at,
  replyKind: r.reply_kind,
  livemode: r.livemode,
});
