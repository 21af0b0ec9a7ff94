import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import { ApiError } from '../errors';

const MAX_BODY = '1mb';
const parseJson = express.json({ limit: MAX_BODY, type: () => true, strict: true });

/** The bytes of each body read by `jsonBodyKeepingBytes`, until its request is collected. */
const bodyBytes = new WeakMap<IncomingMessage, Buffer>();
const parseJsonKeepingBytes = express.json({
  limit: MAX_BODY,
  type: () => true,
  strict: true,
  verify: (req, _res, buf) => {
    bodyBytes.set(req, buf);
  },
});

const hasBody = (headers: Record<string, unknown>): boolean =>
  headers['transfer-encoding'] !== undefined ||
  (headers['content-length'] !== undefined && headers['content-length'] !== '0');

/**
 * JSON bodies only: a body sent with another content type is a 415, before any parsing.
 * Errors raised by the parser (too large, malformed, bad charset) are mapped to the
 * contract's codes by the error middleware.
 */
export const jsonBody: RequestHandler = (req, res, next) => parseBody(parseJson, req, res, next);

/**
 * `jsonBody`, keeping the body's bytes as they arrived (after any Content-Encoding is undone)
 * for `rawBody`: what a signature over the body is checked against.
 */
export const jsonBodyKeepingBytes: RequestHandler = (req, res, next) =>
  parseBody(parseJsonKeepingBytes, req, res, next);

/** The bytes of a body read by `jsonBodyKeepingBytes`; empty when there was no body. */
export const rawBody = (req: IncomingMessage): Buffer => bodyBytes.get(req) ?? Buffer.alloc(0);

function parseBody(parse: RequestHandler, ...[req, res, next]: Parameters<RequestHandler>) {
  if (!hasBody(req.headers)) {
    req.body = undefined;
    return next();
  }
  if (!req.is('application/json') && !req.is('application/*+json')) {
    return next(
      new ApiError(
        415,
        'invalid_request_error',
        'unsupported_media_type',
        'Request bodies must be JSON with Content-Type: application/json',
      ),
    );
  }
  return parse(req, res, next);
}

/**
 * Routes that read a non-JSON body themselves (CSV uploads): the body must be sent as
 * `contentType` (a charset, when given, must be UTF-8), else 415 before anything is read.
 */
export function requireContentType(contentType: string): RequestHandler {
  return (req, _res, next) => {
    // Read from the header itself: req.is() answers null for an empty body, which must
    // reach the route (an empty file is a 400, not a 415).
    const header = req.headers['content-type'] ?? '';
    const type = header.split(';')[0]?.trim().toLowerCase();
    const charset = /;\s*charset="?([^";]+)"?/i.exec(header)?.[1];
    const utf8 = !charset || ['utf-8', 'utf8', 'us-ascii'].includes(charset.toLowerCase());
    if (type === contentType && utf8) return next();
    next(
      new ApiError(
        415,
        'invalid_request_error',
        'unsupported_media_type',
        `Request bodies here must be sent with Content-Type: ${contentType} (UTF-8)`,
      ),
    );
  };
}
