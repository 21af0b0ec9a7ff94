import { Readable } from 'node:stream';
import { createKnex, createStores, newId, type Knex } from '@switchboard/db';
import { runImport, stageFile } from '@switchboard/leads';
import { progressBar } from '../lib/progress';
import { leadRow, prng } from './rows';

export interface ImportRun {
  method: 'import' | 'insert loop';
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  /** Staging the file (stream into Postgres, count, check): import only. */
  stageSeconds?: number;
}

/** A CSV of `count` new leads (unique phones from `phoneBase`), and the same rows parsed. */
export function makeCsv(count: number, phoneBase: number): { csv: Buffer; rows: string[][] } {
  const rand = prng(42);
  const rows: string[][] = [];
  const lines = ['name,phone,email,status,tags'];
  for (let i = 0; i < count; i++) {
    const r = leadRow(i, phoneBase, rand);
    const row = [r.name, r.phone, r.email, r.status, r.tags.join(';')];
    rows.push(row);
    lines.push(row.join(','));
  }
  return { csv: Buffer.from(`${lines.join('\n')}\n`), rows };
}

/** The import as the worker and the CLI run it: staged, finalised, then batches of 1000. */
export async function timeImport(url: string, csv: Buffer, count: number): Promise<ImportRun> {
  const knex = createKnex(url, { poolMax: 4 });
  try {
    const stores = createStores(knex);
    const tenant = await stores.tenants.create({ name: 'Import bench' });
    const t0 = performance.now();
    const chunks = Array.from({ length: Math.ceil(csv.length / 65536) }, (_, i) =>
      csv.subarray(i * 65536, (i + 1) * 65536),
    );
    const staged = await stageFile({ knex, stores }, tenant.id, Readable.from(chunks), 'cli');
    await stores.leadImportLifecycle.finalize(knex, staged.importId, staged, null);
    const stageSeconds = (performance.now() - t0) / 1000;
    const bar = progressBar('import (runImport)'.padEnd(28), count, 'rows');
    const t1 = performance.now();
    const outcome = await runImport({ knex, stores }, staged.importId, {
      onProgress: (imp) => bar.update(imp.processedRows),
    });
    const seconds = (performance.now() - t1) / 1000;
    bar.stop();
    const done = await stores.leadImports.findById(knex, staged.importId);
    if (outcome !== 'completed' || done?.created !== count) {
      throw new Error(`import ${outcome}: ${JSON.stringify(done)}`);
    }
    return { method: 'import', rows: count, seconds, rowsPerSecond: count / seconds, stageSeconds };
  } finally {
    await knex.destroy();
  }
}

const COLUMNS = 11;

/**
 * The baseline: the same rows, already parsed, written by plain multi-row
 * `INSERT … ON CONFLICT (tenant_id, phone) DO UPDATE` statements of 1000 rows, from this
 * process, with the same pool settings: no validation, no events, no progress.
 */
export async function timeInsertLoop(url: string, rows: string[][]): Promise<ImportRun> {
  const knex: Knex = createKnex(url, { poolMax: 4 });
  try {
    const tenant = await createStores(knex).tenants.create({ name: 'Insert loop bench' });
    const bar = progressBar('INSERT … ON CONFLICT loop'.padEnd(28), rows.length, 'rows');
    const t0 = performance.now();
    for (let i = 0; i < rows.length; i += 1000) {
      const batch = rows.slice(i, i + 1000);
      const now = new Date();
      const values: unknown[] = [];
      for (const [name, phone, email, status, tags] of batch) {
        values.push(newId('lead'), tenant.id, name, phone, email, 'csv_import', status);
        // An array literal: knex would spread a JS array into several bindings.
        values.push(`{${(tags ?? '').split(';').filter(Boolean).join(',')}}`, '{}', now, now);
      }
      const placeholders = batch.map(() => `(${Array(COLUMNS).fill('?').join(', ')})`).join(', ');
      await knex.raw(
        `INSERT INTO leads (id, tenant_id, name, phone, email, source, status, tags, metadata,
                            created_at, updated_at)
         VALUES ${placeholders}
         ON CONFLICT (tenant_id, phone) WHERE phone IS NOT NULL DO UPDATE
            SET name = excluded.name, email = excluded.email, status = excluded.status,
                tags = excluded.tags, updated_at = excluded.updated_at`,
        values as never[],
      );
      bar.update(Math.min(rows.length, i + 1000));
    }
    const seconds = (performance.now() - t0) / 1000;
    bar.stop();
    return {
      method: 'insert loop',
      rows: rows.length,
      seconds,
      rowsPerSecond: rows.length / seconds,
    };
  } finally {
    await knex.destroy();
  }
}
