import { runImport } from '@switchboard/leads';
import type { LeadImportJob } from '@switchboard/queues';
import type { WorkerDeps } from '../deps';

/**
 * One job per import: runs it from where its last committed batch ended. The import row is
 * the truth: a job for an import that is gone or already final does nothing, and a run
 * superseded by another (a recovered stalled job) stops at its first batch.
 */
export function leadImportProcessor(deps: WorkerDeps, batchSize?: number) {
  return async (data: LeadImportJob): Promise<void> => {
    const outcome = await runImport(deps, data.importId, {
      batchSize,
      onProgress: (_imp, rows) => deps.metrics.importRows.inc(rows),
    });
    deps.logger.info({ importId: data.importId, outcome }, 'lead import run ended');
  };
}
