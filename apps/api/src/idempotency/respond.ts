import type { Request, Response } from 'express';
import type { Idempotency, IdempotentResponse } from './service';
import { idempotencyKeyReused } from './service';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey } from './key';
import { fingerprintRequest } from './fingerprint';
import { idempotencyKeySchema } from '../shared/schemas';

/** What a creating operation stores with its row as the Postgres backstop of a key. */
export interface IdempotencyScope {
  key: string;
  fingerprint: string;
}

/** The create itself: commits its row (with `scope`, when given) and returns the response. */
export type CreateOperation = (scope: IdempotencyScope | null) => Promise<IdempotentResponse>;

/**
 * Runs a creating POST with Idempotency-Key semantics and sends its response: the one
 * implementation behind every route that creates something (outbound calls, receptionists,
 * SMS, leads, imports, campaigns). Without the header the create just runs. With it, the
 * Redis protocol of `Idempotency.run` decides between running, replaying, 409 and 422, and
 * the create stores `scope` with its row under a unique (tenant_id, idempotency_key) index,
 * so a retry that Redis forgot still finds the row and replays it (see `replayOrReject`).
 */
export async function respondIdempotently(
  idempotency: Idempotency,
  req: Request,
  res: Response,
  create: CreateOperation,
): Promise<void> {
  sendIdempotent(res, await runIdempotently(idempotency, req, create));
}

/**
 * The protocol of `respondIdempotently` without sending: for a route that must finish
 * something (discard a staged upload) before its client sees the answer.
 */
export async function runIdempotently(
  idempotency: Idempotency,
  req: Request,
  create: CreateOperation,
): Promise<IdempotentResponse> {
  const key = parseIdempotencyKey(req.headers['idempotency-key'], req.auth.livemode);
  if (key === null) return create(null);
  // The route's path pattern names the operation the same way under /api/v1 and /v1.
  const operation = `${req.method} ${String((req.route as { path?: unknown }).path)}`;
  const fingerprint = fingerprintRequest(operation, req.valid.body);
  return idempotency.run(req.auth.tenantId, key, fingerprint, () => create({ key, fingerprint }));
}

/** Sends what `runIdempotently` decided. */
export function sendIdempotent(res: Response, result: IdempotentResponse): void {
  if (result.location) res.setHeader('Location', result.location);
  if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.status(result.status).json(result.body);
}

/**
 * The Postgres backstop's verdict on a row that already holds the request's key: the same
 * request (fingerprint) is a replay of that row, anything else a 422.
 */
export function replayOrReject(
  storedFingerprint: string | null,
  scope: IdempotencyScope | null,
): void {
  if (scope === null || storedFingerprint !== scope.fingerprint) throw idempotencyKeyReused();
}

/** The request header as every creating route documents it in the OpenAPI document. */
export const idempotencyKeyHeaderDoc = {
  name: IDEMPOTENCY_HEADER,
  description:
    '1-255 printable ASCII characters, kept 24 hours per tenant. A retry with the same key ' +
    'and body returns the original response with Idempotent-Replayed: true and never creates ' +
    'a second resource; the same key with another body or on another operation is a 422.',
  schema: idempotencyKeySchema,
};

/** The response header of a replay, for the success response of every creating route. */
export const idempotentReplayHeaderDoc = {
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer of an earlier request with the same key',
    schema: { const: 'true' },
  },
} as const;
