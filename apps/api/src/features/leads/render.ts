import type { Lead, LeadImport } from '@switchboard/db';

/** The public read shape of a lead (docs/API.md, Leads). */
export const renderLead = (l: Lead) => ({
  id: l.id,
  name: l.name,
  phone: l.phone,
  email: l.email,
  source: l.source,
  status: l.status,
  notes: l.notes,
  tags: l.tags,
  metadata: l.metadata,
  receptionist_id: l.receptionistId,
  created_at: l.createdAt.toISOString(),
  updated_at: l.updatedAt.toISOString(),
});

/** An import as GET /leads/imports/{id} shows it (never a staged upload). */
export const renderImport = (i: LeadImport) => ({
  id: i.id,
  status: i.status,
  total_rows: i.totalRows,
  processed_rows: i.processedRows,
  created: i.created,
  updated: i.updated,
  skipped: i.skipped,
  duplicates: i.duplicates,
  errors: i.errors,
  failure_reason: i.failureReason,
  created_at: i.createdAt.toISOString(),
  completed_at: i.completedAt?.toISOString() ?? null,
});
