import type { LeadImport } from '@switchboard/db';

/**
 * A CSV import as the public API shows it (`GET /leads/imports/{id}`, docs/API.md) and the
 * operator CLI prints it (`npm run cli -- leads import`): one shape for both.
 */
export const renderLeadImport = (i: LeadImport) => ({
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
  livemode: i.livemode,
});
