import { randomFillSync } from 'node:crypto';
import type { RequestHandler } from 'express';
import { withLogContext } from '@switchboard/logger';

/** Random bytes drawn ahead, ID_BYTES per id: one call into the CSPRNG per IDS_PER_FILL ids. */
const ID_BYTES = 12;
const IDS_PER_FILL = 256;
const pool = Buffer.alloc(ID_BYTES * IDS_PER_FILL);
let offset = pool.length;

/**
 * `req_` + 24 hex digits (96 random bits). Each id uses bytes of the pool no other id used:
 * the pool is refilled before its bytes run out, and never read past.
 */
export function newRequestId(): string {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = `req_${pool.toString('hex', offset, offset + ID_BYTES)}`;
  offset += ID_BYTES;
  return id;
}

/**
 * A client's `X-Request-Id` we adopt (docs/API.md, Errors): 1 to 128 letters, digits and
 * `_ . : -`. Nothing else may reach a header, a log line or a job: no spaces, commas (two
 * headers joined), quotes, control characters.
 */
export const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The request's id: the client's `X-Request-Id` when well-formed, else a new one of ours. */
export const requestIdOf = (sent: string | string[] | undefined): string =>
  typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : newRequestId();

/**
 * Every response carries X-Request-Id: the client's own when it sent a well-formed one,
 * else a new one of ours (an ill-formed one is dropped, never echoed). The rest of the
 * request runs in a log context, so every line logged while serving it carries the same
 * `request_id` (and, once the key is known, `tenant_id` and `key_id`).
 */
export const requestId: RequestHandler = (req, res, next) => {
  req.requestId = requestIdOf(req.headers['x-request-id']);
  res.setHeader('X-Request-Id', req.requestId);
  withLogContext({ request_id: req.requestId }, next);
};
