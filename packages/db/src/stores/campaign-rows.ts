// Row shape and mapper of the campaigns table, shared by the store (reads) and the campaign
// lifecycle (transitions). Row types never leave the db package.

/** queued → running → completed; queued | running → canceled (docs/API.md, Campaigns). */
export type CampaignStatus = 'queued' | 'running' | 'completed' | 'canceled';

export interface Campaign {
  id: string;
  tenantId: string;
  receptionistId: string;
  name: string;
  /** As given: `{{name}}` is rendered per recipient when its message is made. */
  message: string;
  status: CampaignStatus;
  sendRatePerMinute: number;
  /** Distinct recipients, opted-out ones included. */
  recipients: number;
  sent: number;
  failed: number;
  optedOut: number;
  /** Recipients texted by another campaign of the tenant within the repeat window. */
  skipped: number;
  /** The campaign texts its recipients even when another campaign did lately. */
  allowRepeat: boolean;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  canceledAt: Date | null;
  /** The body fingerprint stored with the campaign's Idempotency-Key; null without a key. */
  idempotencyFingerprint: string | null;
  /** Counts the changes clients made to it (its cancel): its ETag, `W/"<version>"`. */
  version: number;
  /**
   * false: a test-mode campaign (made with a test-mode key): its recipients are test leads
   * or numbers, its messages test-mode SMS (docs/API.md, Test mode).
   */
  livemode: boolean;
}

export interface CampaignRow {
  id: string;
  tenant_id: string;
  receptionist_id: string;
  name: string;
  message: string;
  status: CampaignStatus;
  send_rate_per_minute: number;
  recipients: number;
  sent: number;
  failed: number;
  opted_out: number;
  skipped: number;
  allow_repeat: boolean;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  canceled_at: Date | null;
  idempotency_fingerprint: string | null;
  version: number;
  livemode: boolean;
}

/** Named explicitly (no `*`): a later column does not change what a statement returns. */
export const CAMPAIGN_COLUMNS = [
  'id',
  'tenant_id',
  'receptionist_id',
  'name',
  'message',
  'status',
  'send_rate_per_minute',
  'recipients',
  'sent',
  'failed',
  'opted_out',
  'skipped',
  'allow_repeat',
  'created_at',
  'updated_at',
  'started_at',
  'completed_at',
  'canceled_at',
  'idempotency_fingerprint',
  'version',
  'livemode',
] as const;

/** The column list for raw SQL, qualified by `alias` when given. */
export const campaignColumnList = (alias?: string): string =>
  CAMPAIGN_COLUMNS.map((c) => (alias ? `${alias}.${c}` : c)).join(', ');

export const toCampaign = (r: CampaignRow): Campaign => ({
  id: r.id,
  tenantId: r.tenant_id,
  receptionistId: r.receptionist_id,
  name: r.name,
  message: r.message,
  status: r.status,
  sendRatePerMinute: r.send_rate_per_minute,
  recipients: r.recipients,
  sent: r.sent,
  failed: r.failed,
  optedOut: r.opted_out,
  skipped: r.skipped,
  allowRepeat: r.allow_repeat,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  startedAt: r.started_at,
  completedAt: r.completed_at,
  canceledAt: r.canceled_at,
  idempotencyFingerprint: r.idempotency_fingerprint,
  version: r.version,
  livemode: r.livemode,
});
