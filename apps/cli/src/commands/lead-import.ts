import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { Presets, SingleBar } from 'cli-progress';
import type { LeadImport } from '@switchboard/db';
import { ImportFileError, renderLeadImport, runImport, stageFile } from '@switchboard/leads';
import { parseOptions, required, UsageError } from '../args';
import type { CliContext } from '../context';

function progressBar(total: number): SingleBar {
  const bar = new SingleBar(
    {
      format:
        'importing [{bar}] {percentage}% | {value}/{total} rows | created {created}, updated {updated}, skipped {skipped} | ETA {eta_formatted}',
      stream: process.stderr,
      hideCursor: true,
      // Piped or redirected stderr (a script, a log): one line every few seconds.
      noTTYOutput: true,
      notTTYSchedule: 2000,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0, { created: 0, updated: 0, skipped: 0 });
  return bar;
}

/**
 * `lead import --tenant ID --file leads.csv`: the same machinery as POST /leads/import (the
 * file is staged in Postgres, checked and counted, then imported in batches that each commit
 * their leads, events and progress together), run in this process so an operator sees the
 * rows go by without waiting for a worker. Should this process die, the import stays
 * `processing` with no job, and any worker's import reconciler resumes it after the last
 * committed batch.
 */
export async function leadImport(ctx: CliContext, argv: string[]): Promise<object> {
  const o = parseOptions(argv, ['tenant', 'file']);
  const tenantId = required(o, 'tenant');
  const file = required(o, 'file');
  if (!(await ctx.stores.tenants.get(tenantId))) throw new UsageError(`no tenant ${tenantId}`);
  await access(file).catch(() => {
    throw new UsageError(`cannot read ${file}`);
  });
  let staged;
  try {
    staged = await stageFile(ctx, tenantId, createReadStream(file), 'cli');
  } catch (err) {
    if (err instanceof ImportFileError) throw new Error(`${file}: ${err.message}`);
    throw err;
  }
  const finalized = await ctx.stores.leadImportLifecycle.finalize(
    ctx.knex,
    staged.importId,
    staged,
    null,
  );
  if ('conflict' in finalized) throw new Error('the staged import could not be finalised');
  const bar = progressBar(staged.totalRows);
  const show = (imp: LeadImport) =>
    bar.update(imp.processedRows, {
      created: imp.created,
      updated: imp.updated,
      skipped: imp.skipped,
    });
  try {
    await runImport(ctx, staged.importId, { onProgress: show });
  } finally {
    bar.stop();
  }
  const imp = (await ctx.stores.leadImports.findById(ctx.knex, staged.importId)) as LeadImport;
  return { ...renderLeadImport(imp), tenant_id: tenantId };
}
