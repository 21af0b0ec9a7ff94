import type { Campaign } from '@switchboard/db';

/** The public campaign shape (docs/API.md, Campaigns). */
export const renderCampaign = (c: Campaign) => ({
  id: c.id,
  name: c.name,
  receptionist_id: c.receptionistId,
  message: c.message,
  status: c.status,
  recipients: c.recipients,
  sent: c.sent,
  failed: c.failed,
  opted_out: c.optedOut,
  skipped: c.skipped,
  allow_repeat: c.allowRepeat,
  send_rate_per_minute: c.sendRatePerMinute,
  created_at: c.createdAt.toISOString(),
  started_at: c.startedAt?.toISOString() ?? null,
  completed_at: c.completedAt?.toISOString() ?? null,
});

/**
 * The 202 body: the campaign as it was accepted, built from its immutable columns, so a
 * replay answers exactly what the first request did, whatever happened to the campaign since.
 */
export const renderAcceptedCampaign = (c: Campaign) =>
  renderCampaign({
    ...c,
    status: 'queued',
    sent: 0,
    failed: 0,
    optedOut: 0,
    skipped: 0,
    startedAt: null,
    completedAt: null,
  });
