import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';

/** Every response carries X-Request-Id; the id is ours (a client-sent one is not trusted). */
export const requestId: RequestHandler = (req, res, next) => {
  req.requestId = `req_${randomBytes(12).toString('hex')}`;
  res.setHeader('X-Request-Id', req.requestId);
  next();
};
