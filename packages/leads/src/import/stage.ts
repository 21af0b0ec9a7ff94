import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Db } from '@switchboard/db';
import { csvParser, ImportFileError, malformed, mapHeader } from './csv';

/** The contract's upload limit: 20 MiB. */
export const MAX_IMPORT_BYTES = 20 * 1024 * 1024;
/** Size of the stored chunks of a file: what a process holds of it at any time. */
export const CHUNK_BYTES = 1024 * 1024;

export interface StagedFile {
  importId: string;
  totalRows: number;
  bytes: number;
  /** sha256 (hex) of the file: the request fingerprint of an idempotent upload. */
  sha256: string;
}

/**
 * Streams a CSV file into Postgres as a staged import (`uploading`): stored in chunks of
 * CHUNK_BYTES as it arrives (with backpressure, so memory stays at about one chunk whatever
 * the file's size), hashed, and parsed on the way to check its header and count its data
 * rows. A file that cannot be imported (empty, too large, no usable header, no data row,
 * unreadable CSV) throws ImportFileError and leaves nothing behind. The caller turns the
 * staged upload into an import (`LeadImportLifecycle.finalize`) or discards it.
 */
export async function stageFile(
  { knex, stores }: Db,
  tenantId: string,
  file: Readable,
  source: 'api' | 'cli',
  /** The key's mode: a test-mode import makes test-mode leads (the CLI's are live). */
  livemode = true,
): Promise<StagedFile> {
  const lifecycle = stores.leadImportLifecycle;
  const importId = await lifecycle.createStaging(knex, tenantId, source, livemode);
  try {
    return { importId, ...(await store(stores, importId, file)) };
  } catch (err) {
    await lifecycle.discardStaging(knex, importId);
    throw err;
  }
}

async function store({ leadImports: imports }: Db['stores'], importId: string, file: Readable) {
  const hash = createHash('sha256');
  const parser = csvParser();
  let records = 0;
  let parseError: unknown = null;
  parser.on('data', (record: string[]) => {
    if (records++ === 0) {
      try {
        mapHeader(record);
      } catch (err) {
        parseError = err;
        parser.destroy();
      }
    }
  });
  parser.on('error', (err) => {
    parseError ??= malformed(err);
  });
  // Settles when the parser ends, fails or is destroyed (a bad header stops it early).
  const parsed = finished(parser).catch(() => undefined);

  let bytes = 0;
  let seq = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (pendingBytes === 0) return;
    await imports.appendChunk(importId, seq++, Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  // Leaving the loop early must not destroy the request: the API still answers on it.
  for await (const chunk of file.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > MAX_IMPORT_BYTES) {
      throw new ImportFileError('too_large', 'The file is larger than 20 MiB');
    }
    hash.update(chunk);
    pending.push(chunk);
    pendingBytes += chunk.length;
    if (pendingBytes >= CHUNK_BYTES) await flush();
    const more = parser.write(chunk);
    if (parseError) throw parseError;
    if (!more) await Promise.race([once(parser, 'drain'), parsed]);
    if (parseError) throw parseError;
  }
  parser.end();
  await parsed;
  if (parseError) throw parseError;
  if (bytes === 0) throw new ImportFileError('empty', 'The file is empty');
  if (records === 0) throw new ImportFileError('header', 'The file has no header row');
  if (records === 1) throw new ImportFileError('no_rows', 'The file has a header but no data rows');
  await flush();
  return { totalRows: records - 1, bytes, sha256: hash.digest('hex') };
}
