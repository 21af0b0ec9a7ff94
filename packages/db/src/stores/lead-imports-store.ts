import type { Knex } from 'knex';
import { newId } from '../ids';
import { toPgText } from '../text';
import { ago, idsOlderThan } from './older-than';

const TABLE = 'lead_imports';
const CHUNKS = 'lead_import_chunks';

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
}

interface LeadImportRow {
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
}

const toImport = (r: LeadImportRow): LeadImport => ({
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

const isUniqueViolation = (err: unknown): boolean => (err as { code?: string }).code === '23505';

/** CSV imports and the chunks of their files. */
export class LeadImportsStore {
  constructor(private readonly db: Knex) {}

  /** Starts a staged upload: a row nobody else sees until `finalize`. */
  async createStaging(tenantId: string, source: 'api' | 'cli'): Promise<string> {
    const id = newId('imp');
    await this.db(TABLE).insert({ id, tenant_id: tenantId, status: 'uploading', source });
    return id;
  }

  async appendChunk(importId: string, seq: number, data: Buffer): Promise<void> {
    await this.db(CHUNKS).insert({ import_id: importId, seq, data });
  }

  /**
   * Turns a staged upload into an import (`processing`), holding the Idempotency-Key when
   * given. `conflict` when another import of the tenant holds that key already: the staged
   * upload is then left for the caller to discard.
   */
  async finalize(
    id: string,
    file: { totalRows: number; bytes: number; sha256: string },
    idempotency: { key: string; fingerprint: string } | null,
  ): Promise<{ import: LeadImport } | { conflict: true }> {
    try {
      const [row] = (await this.db(TABLE)
        .where({ id, status: 'uploading' })
        .update({
          status: 'processing',
          total_rows: file.totalRows,
          bytes: file.bytes,
          sha256: file.sha256,
          idempotency_key: idempotency?.key ?? null,
          idempotency_fingerprint: idempotency?.fingerprint ?? null,
          created_at: this.db.fn.now(),
          updated_at: this.db.fn.now(),
        })
        .returning('*')) as LeadImportRow[];
      if (!row) throw new Error(`staged import ${id} is gone`);
      return { import: toImport(row) };
    } catch (err) {
      if (isUniqueViolation(err)) return { conflict: true };
      throw err;
    }
  }

  /** Drops a staged upload that will not become an import (its chunks go with it). */
  async discardStaging(id: string): Promise<void> {
    await this.db(TABLE).where({ id, status: 'uploading' }).delete();
  }

  /** The tenant's import (never a staged upload), or undefined. */
  async get(tenantId: string, id: string): Promise<LeadImport | undefined> {
    const row = (await this.db(TABLE)
      .where({ tenant_id: tenantId, id })
      .whereNot('status', 'uploading')
      .first()) as LeadImportRow | undefined;
    return row && toImport(row);
  }

  async findById(db: Knex, id: string): Promise<LeadImport | undefined> {
    const row = (await db(TABLE).where({ id }).first()) as LeadImportRow | undefined;
    return row && toImport(row);
  }

  async findByIdempotencyKey(tenantId: string, key: string): Promise<LeadImport | undefined> {
    const row = (await this.db(TABLE)
      .where({ tenant_id: tenantId, idempotency_key: key })
      .first()) as LeadImportRow | undefined;
    return row && toImport(row);
  }

  /** Counts a run of the import (runs since the last committed batch) and returns the row. */
  async startRun(id: string): Promise<LeadImport | undefined> {
    const [row] = (await this.db(TABLE)
      .where({ id, status: 'processing' })
      .increment('attempts', 1)
      .returning('*')) as LeadImportRow[];
    return row && toImport(row);
  }

  /** The import locked for one batch's transaction. */
  async lock(db: Knex, id: string): Promise<LeadImport | undefined> {
    const row = (await db(TABLE).where({ id }).forUpdate().first()) as LeadImportRow | undefined;
    return row && toImport(row);
  }

  /**
   * Adds one batch's outcome and advances the cursor, inside the batch's transaction; the
   * last batch also completes the import and drops its file.
   */
  async recordBatch(
    db: Knex,
    current: LeadImport,
    batch: ImportBatchOutcome,
    done: boolean,
  ): Promise<LeadImport> {
    const room = Math.max(0, MAX_IMPORT_ERRORS - current.errors.length);
    const [row] = (await db(TABLE)
      .where({ id: current.id })
      .update({
        processed_rows: current.processedRows + batch.rows,
        created: current.created + batch.created,
        updated: current.updated + batch.updated,
        skipped: current.skipped + batch.skipped,
        duplicates: current.duplicates + batch.duplicates,
        errors: JSON.stringify([...current.errors, ...batch.errors.slice(0, room)]),
        // Progress: the runs that failed before this one are forgiven.
        attempts: 0,
        updated_at: db.fn.now(),
        ...(done ? { status: 'completed', completed_at: db.fn.now() } : {}),
      })
      .returning('*')) as LeadImportRow[];
    if (done) await db(CHUNKS).where({ import_id: current.id }).delete();
    return toImport(row as LeadImportRow);
  }

  /**
   * Gives an import up (its file cannot be read, or it failed too often). The reason is also
   * appended to `errors` as `{row: 0, field: null, message}` (row 0: the file as a whole), so
   * a failed import never shows an empty error list.
   */
  async fail(id: string, reason: string): Promise<void> {
    const message = toPgText(reason);
    const entry = JSON.stringify([{ row: 0, field: null, message }]);
    await this.db(TABLE)
      .where({ id, status: 'processing' })
      .update({
        status: 'failed',
        failure_reason: message,
        errors: this.db.raw('errors || ?::jsonb', [entry]),
        updated_at: this.db.fn.now(),
      });
  }

  /** The chunks of an import's file in order, one at a time (memory stays at one chunk). */
  async *readChunks(id: string): AsyncGenerator<Buffer> {
    for (let seq = 0; ; seq++) {
      const row = (await this.db(CHUNKS).select('data').where({ import_id: id, seq }).first()) as
        { data: Buffer } | undefined;
      if (!row) return;
      yield row.data;
    }
  }

  /** Imports still processing without progress for `graceMs` (their job may be lost). */
  async stalled(graceMs: number, limit: number): Promise<string[]> {
    const processing = this.db(TABLE).where({ status: 'processing' });
    return idsOlderThan(this.db, processing, 'updated_at', graceMs, limit);
  }

  /** Deletes uploads abandoned mid-way (the API process died); returns how many. */
  async deleteAbandonedUploads(olderThanMs: number): Promise<number> {
    return this.db(TABLE)
      .where({ status: 'uploading' })
      .andWhere('updated_at', '<', ago(this.db, olderThanMs))
      .delete();
  }
}
