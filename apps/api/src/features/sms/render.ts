import type { Sms } from '@switchboard/db';

/** The public message shape (docs/API.md, SMS). */
export const renderSms = (s: Sms) => ({
  id: s.id,
  direction: s.direction,
  status: s.status,
  receptionist_id: s.receptionistId,
  from: s.from,
  to: s.to,
  message: s.message,
  segments: s.segments,
  campaign_id: s.campaignId,
  error_code: s.errorCode,
  error_message: s.errorMessage,
  metadata: s.metadata,
  created_at: s.createdAt.toISOString(),
  send_at: s.sendAt?.toISOString() ?? null,
  sent_at: s.sentAt?.toISOString() ?? null,
  delivered_at: s.deliveredAt?.toISOString() ?? null,
  received_at: s.receivedAt?.toISOString() ?? null,
  livemode: s.livemode,
});

/**
 * The 202 body: the message as it was accepted, built from its immutable columns, so a
 * replay answers exactly what the first request did, whatever happened to the message since.
 */
export const renderAcceptedSms = (s: Sms) =>
  renderSms({
    ...s,
    status: s.sendAt ? 'scheduled' : 'queued',
    errorCode: null,
    errorMessage: null,
    sentAt: null,
    deliveredAt: null,
  });
