import type { Knex } from 'knex';
import { newId } from '../ids';
import { toPgText } from '../text';
import {
  MAX_IMPORT_ERRORS,
  toImport,
  type ImportBatchOutcome,
  type LeadImport,
  type LeadImportRow,
} from './lead-import-rows';
import { ago } from './older-than';

const TABLE = 'lead_imports';
const CHUNKS = 'lead_import_chunks';

const isUniqueViolation = (err: unknown): boolean => (err as { code?: string }).code === '23505';

/**
 * The lead import lifecycle (`lead_imports.status`), one statement per transition, the
 * caller's connection or transaction first:
 *
 *   createStaging ─▶ uploading ──finalize──▶ processing ──recordBatch (last)──▶ completed
 *                      │                       │  ▲ └──recordBatch──┘ (progress)
 *                      │                       │  └──startRun (counts a run)
 *                      │                       └──fail──▶ failed
 *                      └──discardStaging / deleteAbandonedUploads──▶ gone (with its chunks)
 *
 * `uploading` is internal: the file is still arriving and the import does not exist for the
 * API yet. Callers: stageFile and runImport (packages/leads/src/import), the API's
 * POST /leads/import, the CLI's `lead-import`, the worker's import reconciler. No transition
 * emits an event of its own: a batch emits its leads' events (lead.created, lead.updated) in
 * the transaction of its `recordBatch`.
 *
 * Invariants: `processed_rows` is the resume cursor and the guard: a batch commits only under
 * `lock` with the cursor where its run found it, so two runs of one import never both apply
 * a batch; `attempts` counts the runs since the last committed batch, and `fail` gives up an
 * import only while it is processing, so a completed import is never failed.
 */
export class LeadImportLifecycle {
  /** Starts a staged upload (of mode `livemode`): a row nobody else sees until `finalize`. */
  async createStaging(
    db: Knex,
    tenantId: string,
    source: 'api' | 'cli',
    livemode = true,
  ): Promise<string> {
    const id = newId('imp');
    await db(TABLE).insert({ id, tenant_id: tenantId, status: 'uploading', source, livemode });
    return id;
  }

  /**
   * uploading → processing, holding the Idempotency-Key when given. `conflict` when another
   * import of the tenant holds that key already: the staged upload is then left for the
   * caller to discard.
   */
  async finalize(
    db: Knex,
    id: string,
    file: { totalRows: number; bytes: number; sha256: string },
    idempotency: { key: string; fingerprint: string } | null,
  ): Promise<{ import: LeadImport } | { conflict: true }> {
    try {
      const [row] = (await db(TABLE)
        .where({ id, status: 'uploading' })
        .update({
          status: 'processing',
          total_rows: file.totalRows,
          bytes: file.bytes,
          sha256: file.sha256,
          idempotency_key: idempotency?.key ?? null,
          idempotency_fingerprint: idempotency?.fingerprint ?? null,
          created_at: db.fn.now(),
          updated_at: db.fn.now(),
        })
        .returning('*')) as LeadImportRow[];
      if (!row) throw new Error(`staged import ${id} is gone`);
      return { import: toImport(row) };
    } catch (err) {
      if (isUniqueViolation(err)) return { conflict: true };
      throw err;
    }
  }

  /** uploading → gone: a staged upload that will not become an import (its chunks go with it). */
  async discardStaging(db: Knex, id: string): Promise<void> {
    await db(TABLE).where({ id, status: 'uploading' }).delete();
  }

  /** Counts a run of a processing import (runs since the last committed batch); the row. */
  async startRun(db: Knex, id: string): Promise<LeadImport | undefined> {
    const [row] = (await db(TABLE)
      .where({ id, status: 'processing' })
      .increment('attempts', 1)
      .returning('*')) as LeadImportRow[];
    return row && toImport(row);
  }

  /** The import locked for one batch's transaction. */
  async lock(trx: Knex, id: string): Promise<LeadImport | undefined> {
    const row = (await trx(TABLE).where({ id }).forUpdate().first()) as LeadImportRow | undefined;
    return row && toImport(row);
  }

  /**
   * Adds one batch's outcome and advances the cursor, inside the batch's transaction; the
   * last batch also completes the import (processing → completed) and drops its file.
   */
  async recordBatch(
    trx: Knex,
    current: LeadImport,
    batch: ImportBatchOutcome,
    done: boolean,
  ): Promise<LeadImport> {
    const room = Math.max(0, MAX_IMPORT_ERRORS - current.errors.length);
    const [row] = (await trx(TABLE)
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
        updated_at: trx.fn.now(),
        ...(done ? { status: 'completed', completed_at: trx.fn.now() } : {}),
      })
      .returning('*')) as LeadImportRow[];
    if (done) await trx(CHUNKS).where({ import_id: current.id }).delete();
    return toImport(row as LeadImportRow);
  }

  /**
   * processing → failed: its file cannot be read, or it failed too often. The reason is also
   * appended to `errors` as `{row: 0, field: null, message}` (row 0: the file as a whole), so
   * a failed import never shows an empty error list.
   */
  async fail(db: Knex, id: string, reason: string): Promise<void> {
    const message = toPgText(reason);
    const entry = JSON.stringify([{ row: 0, field: null, message }]);
    await db(TABLE)
      .where({ id, status: 'processing' })
      .update({
        status: 'failed',
        failure_reason: message,
        errors: db.raw('errors || ?::jsonb', [entry]),
        updated_at: db.fn.now(),
      });
  }

  /** uploading → gone for uploads abandoned mid-way (the API process died); how many. */
  async deleteAbandonedUploads(db: Knex, olderThanMs: number): Promise<number> {
    return db(TABLE)
      .where({ status: 'uploading' })
      .andWhere('updated_at', '<', ago(db, olderThanMs))
      .delete();
  }
}
