/**
 * A lead import's row and its domain object, shared by the store (reads, chunks) and the
 * lifecycle (every change of state). Row types stay in packages/db.
 */

/** `uploading` is internal: the file is still arriving and the import does not exist yet. */
export type LeadImportStatus = 'uploading' | 'processing' | 'completed' | 'failed';

/** One rejected data row of a file (`row` is 1-based, header excluded; 0: the whole file). */
export interface ImportRowError {
  row: number;
  field: string | null;
  message: string;
}

export interface LeadImport {
  id: string;
  tenantId: string;
  status: LeadImportStatus;
  totalRows: number;
  processedRows: number;
  created: number;
  updated: number;
  skipped: number;
  duplicates: number;
  errors: ImportRowError[];
  bytes: number;
  attempts: number;
  failureReason: string | null;
  idempotencyFingerprint: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  /** false: made with a test-mode key; its leads are test-mode leads (docs/API.md, Test mode). */
  livemode: boolean;
}

export interface LeadImportRow {
  id: string;
  tenant_id: string;
  status: LeadImportStatus;
  total_rows: number;
  processed_rows: number;
  created: number;
  updated: number;
  skipped: number;
  duplicates: number;
  errors: ImportRowError[];
  bytes: string;
  attempts: number;
  failure_reason: string | null;
  idempotency_fingerprint: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  livemode: boolean;
}

export const toImport = (r: LeadImportRow): LeadImport => ({
  id: r.id,
  tenantId: r.tenant_id,
  status: r.status,
  totalRows: r.total_rows,
  processedRows: r.processed_rows,
  created: r.created,
  updated: r.updated,
  skipped: r.skipped,
  duplicates: r.duplicates,
  errors: r.errors,
  bytes: Number(r.bytes),
  attempts: r.attempts,
  failureReason: r.failure_reason,
  idempotencyFingerprint: r.idempotency_fingerprint,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  completedAt: r.completed_at,
  livemode: r.livemode,
});

/** What one committed batch adds to an import. */
export interface ImportBatchOutcome {
  rows: number;
  created: number;
  updated: number;
  skipped: number;
  duplicates: number;
  /** Errors of this batch; only as many as fit under the import's cap are kept. */
  errors: ImportRowError[];
}

/** Row errors kept per import (docs/API.md, Leads: the first 100). */
export const MAX_IMPORT_ERRORS = 100;
