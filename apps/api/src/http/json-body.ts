import express, { type RequestHandler } from 'express';
import { ApiError } from '../errors';

const MAX_BODY = '1mb';
const parseJson = express.json({ limit: MAX_BODY, type: () => true, strict: true });

const hasBody = (headers: Record<string, unknown>): boolean =>
  headers['transfer-encoding'] !== undefined ||
  (headers['content-length'] !== undefined && headers['content-length'] !== '0');

/**
 * JSON bodies only: a body sent with another content type is a 415, before any parsing.
 * Errors raised by the parser (too large, malformed, bad charset) are mapped to the
 * contract's codes by the error middleware.
 */
export const jsonBody: RequestHandler = (req, res, next) => {
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
  return parseJson(req, res, next);
};
