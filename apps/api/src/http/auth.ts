import type { RequestHandler } from 'express';
import type { ApiKeysStore, Scope } from '@switchboard/db';
import { insufficientScope, unauthenticated } from '../errors';

/** admin includes write, write includes read. */
const IMPLIED: Record<Scope, readonly Scope[]> = {
  read: ['read'],
  write: ['read', 'write'],
  admin: ['read', 'write', 'admin'],
};

export const hasScope = (granted: readonly Scope[], needed: Scope): boolean =>
  granted.some((g) => IMPLIED[g].includes(needed));

const BEARER = /^Bearer ([A-Za-z0-9_]{8,200})$/;

/**
 * Authenticates the API key and enforces the route's scope. The key is looked up on every
 * request (no cache), so a revoked key is refused from the very next request.
 */
export function authenticate(keys: ApiKeysStore, scope: Scope): RequestHandler {
  return async (req, _res, next) => {
    const header = req.headers.authorization;
    if (!header) throw unauthenticated('missing_api_key', 'Send Authorization: Bearer <API key>');
    const match = BEARER.exec(header);
    if (!match?.[1]) {
      throw unauthenticated('invalid_authorization_header', 'Use Authorization: Bearer <API key>');
    }
    const key = await keys.findActiveByKey(match[1]);
    if (!key) throw unauthenticated('invalid_api_key', 'The API key is unknown or revoked');
    if (!hasScope(key.scopes, scope)) throw insufficientScope(scope);
    req.auth = { tenantId: key.tenantId, keyId: key.id, scopes: key.scopes };
    // Best effort: a failure to record last use must not fail the request.
    keys.touch(key.id).catch(() => undefined);
    next();
  };
}
