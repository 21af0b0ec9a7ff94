import type { Knex } from 'knex';
import { idsOlderThan } from './older-than';
import { toImport, type LeadImport, type LeadImportRow } from './lead-import-rows';

export {
  MAX_IMPORT_ERRORS,
  type ImportBatchOutcome,
  type ImportRowError,
  type LeadImport,
  type LeadImportStatus,
} from './lead-import-rows';

const TABLE = 'lead_imports';
const CHUNKS = 'lead_import_chunks';

/**
 * CSV imports: reads, and the chunks of their files. Every change of an import's state
 * (staged, processing, a batch, completed, failed, dropped) is LeadImportLifecycle's
 * (lead-import-lifecycle.ts).
 */
export class LeadImportsStore {
  constructor(private readonly db: Knex) {}

  async appendChunk(importId: string, seq: number, data: Buffer): Promise<void> {
    await this.db(CHUNKS).insert({ import_id: importId, seq, data });
  }

  /** The tenant's import of mode `livemode` (never a staged upload), or undefined. */
  async get(tenantId: string, id: string, livemode: boolean): Promise<LeadImport | undefined> {
    const row = (await this.db(TABLE)
      .where({ tenant_id: tenantId, id, livemode })
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
}
