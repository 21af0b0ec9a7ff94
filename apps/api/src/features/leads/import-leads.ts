import type { Request, Response } from 'express';
import type { LeadImport } from '@switchboard/db';
import { MAX_IMPORT_BYTES, renderLeadImport, stageFile } from '@switchboard/leads';
import { enqueueFromRequest } from '@switchboard/queues';
import type { Deps } from '../../deps';
import { ApiError } from '../../errors';
import {
  replayOrReject,
  runIdempotently,
  sendIdempotent,
  type IdempotentResponse,
} from '../../idempotency';
import { withLeadErrors } from './errors';

const tooLarge = () =>
  new ApiError(413, 'invalid_request_error', 'payload_too_large', 'The file is larger than 20 MiB');

const accepted = (imp: LeadImport, replayed: boolean): IdempotentResponse => ({
  status: 202,
  body: renderLeadImport(imp),
  location: `/api/v1/leads/imports/${imp.id}`,
  replayed,
});

/**
 * POST /leads/import. The body is streamed into Postgres as a staged upload (never held
 * whole in memory, never on local disk, so any worker can import it), checked and counted on
 * the way; only then does the Idempotency-Key protocol run, with the file's sha256 as the
 * request fingerprint: the first request turns the staged upload into an import and queues
 * it, a retry replays that import, and every other outcome discards the staged upload,
 * before the client sees the answer: no staged upload outlives its request.
 */
export async function importLeads(deps: Deps, req: Request, res: Response): Promise<void> {
  const { leadImports, leadImportLifecycle } = deps.stores;
  const tenantId = req.auth.tenantId;
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (declared > MAX_IMPORT_BYTES) throw tooLarge();
  let staged;
  try {
    // A test-mode key's import makes test-mode leads (docs/API.md, Test mode).
    const { livemode } = req.auth;
    staged = await withLeadErrors(() => stageFile(deps, tenantId, req, 'api', livemode));
  } catch (err) {
    // The rest of an unread chunked body is not drained: the connection is closed instead.
    if (!req.complete && req.headers['content-length'] === undefined) {
      res.setHeader('Connection', 'close');
    }
    throw err;
  }
  let kept = false;
  // The file's digest stands for the body in the Idempotency-Key fingerprint.
  req.valid = { params: {}, query: {}, body: { sha256: staged.sha256, bytes: staged.bytes } };
  let result: IdempotentResponse;
  try {
    result = await runIdempotently(deps.idempotency, req, async (scope) => {
      const finalized = await leadImportLifecycle.finalize(
        deps.knex,
        staged.importId,
        staged,
        scope,
      );
      if ('conflict' in finalized) {
        const held = scope && (await leadImports.findByIdempotencyKey(tenantId, scope.key));
        if (!held) throw new Error('import key conflict without an import holding it');
        replayOrReject(held.idempotencyFingerprint, scope);
        return accepted(held, true);
      }
      kept = true;
      await enqueueImport(deps, finalized.import.id);
      return accepted(finalized.import, false);
    });
  } finally {
    if (!kept) await leadImportLifecycle.discardStaging(deps.knex, staged.importId);
  }
  sendIdempotent(res, result);
}

/** Queues the import (jobId = import id); the worker's reconciler covers a failure to. */
async function enqueueImport(deps: Deps, importId: string): Promise<void> {
  try {
    await enqueueFromRequest(deps.queues, deps.redis, 'leadImports', { data: { v: 1, importId } });
  } catch (err) {
    deps.logger.warn({ err, importId }, 'import job not added; the import reconciler will add it');
  }
}
