import { Readable } from 'node:stream';
import type { Db, LeadImport } from '@switchboard/db';
import { applyBatch } from './batch';
import { csvParser, ImportFileError, malformed, mapHeader, type ColumnMap } from './csv';
import { parseRow, type ParsedRow } from './rows';

/** Rows per transaction: big enough to amortise round trips, small enough to show progress. */
export const DEFAULT_BATCH_SIZE = 1000;
/** Runs in a row that commit no batch (worker or CLI) before an import is given up. */
export const MAX_IMPORT_RUNS = 5;

export interface RunImportOptions {
  batchSize?: number;
  /** Called after each committed batch with the import as it now is and its row count. */
  onProgress?: (imp: LeadImport, rows: number) => void;
}

export type RunImportResult = 'completed' | 'failed' | 'superseded' | 'not_processing';

/** Another run committed a batch this one was about to commit: this run stops. */
class Superseded extends Error {}

/**
 * Imports a file that was uploaded and finalised (`processing`), resuming after the last
 * committed batch. The file is streamed from its chunks through the CSV parser; every batch
 * is ONE transaction that upserts its leads, emits their events and advances the cursor
 * (`processed_rows`) and the counters, so a crash at any point resumes where the last batch
 * ended with nothing created or emitted twice. The cursor is also the guard: a batch commits
 * only if the cursor is still where this run found it, so two runs of one import (a stalled
 * job recovered while its first worker still runs, the CLI and a worker) never both apply it.
 */
export async function runImport(
  { knex, stores }: Db,
  importId: string,
  opts: RunImportOptions = {},
): Promise<RunImportResult> {
  const lifecycle = stores.leadImportLifecycle;
  const batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  const started = await lifecycle.startRun(knex, importId);
  if (!started) return 'not_processing';
  if (started.attempts > MAX_IMPORT_RUNS) {
    await lifecycle.fail(
      knex,
      importId,
      `Gave up after ${MAX_IMPORT_RUNS} runs that made no progress`,
    );
    return 'failed';
  }
  let cursor = started.processedRows;

  const commit = async (rows: ParsedRow[], done: boolean) => {
    const imp = await knex.transaction(async (trx) => {
      const current = await lifecycle.lock(trx, importId);
      if (!current || current.status !== 'processing' || current.processedRows !== cursor) {
        throw new Superseded();
      }
      const outcome = await applyBatch(trx, stores.leads, current, rows);
      return lifecycle.recordBatch(trx, current, outcome, done);
    });
    const committed = imp.processedRows - cursor;
    cursor = imp.processedRows;
    opts.onProgress?.(imp, committed);
  };

  const parser = csvParser();
  const source = Readable.from(stores.leadImports.readChunks(importId));
  source.on('error', (err) => parser.destroy(err));
  source.pipe(parser);
  let columns: ColumnMap | null = null;
  let row = 0;
  let batch: ParsedRow[] = [];
  let completed = false;
  // One batch commits while the next one is read and checked: parsing (CPU here) and the
  // batch's statements (CPU in Postgres) overlap. Commits stay strictly one after another.
  let inFlight: Promise<void> = Promise.resolve();
  const next = async (rows: ParsedRow[], done: boolean) => {
    await inFlight;
    inFlight = commit(rows, done);
    inFlight.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
  };
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!columns) {
        columns = mapHeader(record);
        continue;
      }
      row++;
      if (row <= cursor) continue;
      batch.push(parseRow(record, columns, row));
      if (batch.length >= batchSize) {
        completed = row >= started.totalRows;
        await next(batch, completed);
        batch = [];
      }
    }
    if (!columns) throw new ImportFileError('header', 'The file has no header row');
    // The last batch (possibly empty) completes the import in its own transaction.
    if (!completed) await next(batch, true);
    await inFlight;
    return 'completed';
  } catch (err) {
    await inFlight.catch(() => undefined);
    if (err instanceof Superseded) return 'superseded';
    const fileError =
      err instanceof ImportFileError ? err : isCsvError(err) ? malformed(err) : null;
    if (!fileError) throw err;
    await lifecycle.fail(knex, importId, fileError.message);
    return 'failed';
  } finally {
    source.destroy();
    parser.destroy();
  }
}

const isCsvError = (err: unknown): boolean =>
  typeof (err as { code?: unknown }).code === 'string' &&
  String((err as { code: string }).code).startsWith('CSV_');
