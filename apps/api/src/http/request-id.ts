import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import { withLogContext } from '@switchboard/logger';

/**
 * Every response carries X-Request-Id; the id is ours (a client-sent one is not trusted).
 * The rest of the request runs in a log context, so every line logged while serving it
 * carries the same `request_id` (and, once the key is known, `tenant_id` and `key_id`).
 */
export const requestId: RequestHandler = (req, res, next) => {
  req.requestId = `req_${randomBytes(12).toString('hex')}`;
  res.setHeader('X-Request-Id', req.requestId);
  withLogContext({ request_id: req.requestId }, next);
};
