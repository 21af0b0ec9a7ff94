// Row shape and mapper of the leads table, kept apart so leads-store.ts reads as its queries.
// Row types never leave the db package.

export const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'won', 'lost'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];
export const LEAD_SOURCES = ['api', 'csv_import', 'call', 'mcp'] as const;
export type LeadSource = (typeof LEAD_SOURCES)[number];

/** The fields a lead and its row name and type alike (the row's other columns are snake_case). */
interface LeadContent {
  name: string | null;
  phone: string | null;
  email: string | null;
  source: LeadSource;
  status: LeadStatus;
  notes: string | null;
  tags: string[];
  metadata: Record<string, string>;
}

export interface Lead extends LeadContent {
  id: string;
  tenantId: string;
  receptionistId: string | null;
  lastImportId: string | null;
  idempotencyFingerprint: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Counts the changes made by its PATCHes and imports: its ETag, `W/"<version>"`. */
  version: number;
  /**
   * false: a test-mode lead (made with a test-mode key, by its import, or by a test-mode
   * call): seen and used by test-mode keys and test campaigns only (docs/API.md, Test mode).
   */
  livemode: boolean;
}

/** The writable fields of a lead (docs/API.md, Leads), as the domain names them. */
export interface LeadFields {
  name?: string | null;
  phone?: string | null;
  email?: string | null;
  status?: LeadStatus;
  notes?: string | null;
  tags?: string[];
  metadata?: Record<string, string>;
  receptionistId?: string | null;
}

export interface LeadRow extends LeadContent {
  id: string;
  tenant_id: string;
  receptionist_id: string | null;
  last_import_id: string | null;
  idempotency_key: string | null;
  idempotency_fingerprint: string | null;
  created_at: Date;
  updated_at: Date;
  version: number;
  livemode: boolean;
}

export const toLead = (r: LeadRow): Lead => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  phone: r.phone,
  email: r.email,
  source: r.source,
  status: r.status,
  notes: r.notes,
  tags: r.tags,
  metadata: r.metadata,
  receptionistId: r.receptionist_id,
  lastImportId: r.last_import_id,
  idempotencyFingerprint: r.idempotency_fingerprint,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  version: r.version,
  livemode: r.livemode,
});

/** Column values of the given fields (undefined = not given, so not written). */
export function leadColumns(f: LeadFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (f.name !== undefined) out.name = f.name;
  if (f.phone !== undefined) out.phone = f.phone;
  if (f.email !== undefined) out.email = f.email;
  if (f.status !== undefined) out.status = f.status;
  if (f.notes !== undefined) out.notes = f.notes;
  // pg sends JS arrays as Postgres arrays, but objects must be JSON text for jsonb.
  if (f.tags !== undefined) out.tags = f.tags;
  if (f.metadata !== undefined) out.metadata = JSON.stringify(f.metadata);
  if (f.receptionistId !== undefined) out.receptionist_id = f.receptionistId;
  return out;
}
