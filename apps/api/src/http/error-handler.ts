import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { isTransientDbError, VersionMismatch } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { docUrlOf } from '../error-codes';
import { ApiError, serviceUnavailable, type ErrorAnswer } from '../errors';
import { preconditionFailed } from './if-match';

/** Errors of the body parser (body-parser/http-errors) carry `type` and `status`. */
interface ParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

const PARSER_ERRORS: Record<string, () => ApiError> = {
  'entity.too.large': () =>
    new ApiError(413, 'invalid_request_error', 'payload_too_large', 'Request body exceeds 1 MiB'),
  'entity.parse.failed': () =>
    new ApiError(400, 'invalid_request_error', 'invalid_json', 'Request body is not valid JSON'),
  'encoding.unsupported': () =>
    new ApiError(415, 'invalid_request_error', 'unsupported_media_type', 'Body must be UTF-8 JSON'),
  'charset.unsupported': () =>
    new ApiError(415, 'invalid_request_error', 'unsupported_media_type', 'Body must be UTF-8 JSON'),
  'request.aborted': () =>
    new ApiError(400, 'invalid_request_error', 'request_aborted', 'Request body was cut short'),
  'request.size.invalid': () =>
    new ApiError(400, 'invalid_request_error', 'invalid_body', 'Request body size is wrong'),
};

/**
 * Outages of Postgres or Redis are the caller's cue to retry, not bugs: a 503 with
 * Retry-After. Postgres' side is the one rule the worker retries by (`isTransientDbError`:
 * the server stopping or restarting, a lost connection, e.g. a transaction whose connection
 * died, which node-postgres reports by message only); Redis' side is recognised by the
 * errors ioredis raises when a server is away.
 */
function isBackendUnavailable(err: unknown): boolean {
  if (isTransientDbError(err)) return true;
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === 'MaxRetriesPerRequestError' || e.name === 'ClusterAllFailedError') return true;
  if (e.code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'].includes(e.code)) return true;
  const m = e.message ?? '';
  return (
    m.includes('enableOfflineQueue options is false') ||
    m.includes('Connection is closed') ||
    m.includes('Command timed out') ||
    // A Redis Cluster that lost a slot's master, or whose nodes keep redirecting.
    m.startsWith('CLUSTERDOWN') ||
    m.startsWith('Too many Cluster redirections')
  );
}

/** An http-errors client error (4xx, `expose`), as raised by body-parser and raw-body. */
const isClientError = (e: ParserError): e is ParserError & { status: number } =>
  e.expose === true &&
  Number.isInteger(e.status) &&
  (e.status as number) >= 400 &&
  (e.status as number) < 500;

function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  // A conditional edit found its row at another version (checked by the edit's statement).
  if (err instanceof VersionMismatch) return preconditionFailed(err.current);
  const parser = err as ParserError;
  if (parser.type && PARSER_ERRORS[parser.type]) return PARSER_ERRORS[parser.type]?.();
  // The body parser also raises client errors without a type, e.g. a body that does not
  // decompress under its Content-Encoding (a zlib error wrapped as a 400): honour the status.
  if (isClientError(parser)) {
    return new ApiError(
      parser.status,
      'invalid_request_error',
      'invalid_body',
      'The request body could not be read; check that it matches its Content-Encoding',
    );
  }
  // The router could not percent-decode a path parameter (e.g. /calls/%E0%A4%A).
  if (err instanceof URIError) {
    return new ApiError(
      400,
      'invalid_request_error',
      'invalid_path',
      'The request path is not valid percent-encoded UTF-8',
    );
  }
  if (isBackendUnavailable(err)) return serviceUnavailable();
  return undefined;
}

/** The one renderer of the contract's error body (docs/API.md, Errors). */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  // The log context (request-id.ts) adds request_id, tenant_id and key_id to these lines.
  return (err, req, res, _next) => {
    const known = toApiError(err);
    const apiError =
      known ?? new ApiError(500, 'api_error', 'internal_error', 'An internal error occurred');
    if (!known) logger.error({ err }, 'unhandled error');
    else if (apiError.status >= 500) logger.warn({ err }, apiError.code);
    if (res.headersSent) return res.end();
    renderError(res, apiError, req.requestId);
  };
}

/** Writes the contract's error body and the error's headers (docs/API.md, Errors). */
export function renderError(res: Response, apiError: ErrorAnswer, requestId: string): void {
  for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
  res.status(apiError.status).json(errorBody(apiError, requestId));
}

/** The contract's error body (docs/API.md, Errors); also written without Express (early-refusal.ts). */
export function errorBody(apiError: ErrorAnswer, requestId: string): Record<string, unknown> {
  const error: Record<string, unknown> = {
    type: apiError.type,
    code: apiError.code,
    message: apiError.message,
  };
  if (apiError.param) error.param = apiError.param;
  error.doc_url = docUrlOf(apiError.code);
  return { error, request_id: requestId };
}

export const notFoundRoute: RequestHandler = (req, _res, next) =>
  next(
    new ApiError(
      404,
      'invalid_request_error',
      'route_not_found',
      `No route ${req.method} ${req.path}`,
    ),
  );
