import type { RequestHandler } from 'express';
import type { ApiKeysStore, PortalSessionsStore, Scope } from '@switchboard/db';
import { insufficientScope, unauthenticated } from '../errors';
import type { RouteDef } from '../openapi/route';
import type { KeyRateLimits } from './key-rate-limit';
import { authenticatePortal, PORTAL_TOKEN_PREFIX } from './portal-auth';

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
 * Authenticates the API key, counts the request against the key's rate limit, and enforces
 * the route's scope. The key is looked up on every request (no cache), so a revoked key is
 * refused from the very next request, and a tenant's new rate limit applies at once (the
 * same statement reads it). Every request of a known key is counted, refused ones too, and
 * its answer carries the RateLimit headers whatever its status. `track` counts the write
 * that outlives the request (last use), so a shutdown waits for it.
 */
export function authenticate(
  keys: ApiKeysStore,
  limits: KeyRateLimits,
  scope: Scope,
  track: (work: Promise<unknown>) => Promise<unknown> = (work) => work,
  portal?: { sessions: PortalSessionsStore; route: Pick<RouteDef, 'portal'> },
): RequestHandler {
  return async (req, res, next) => {
    const header = req.headers.authorization;
    if (!header) throw unauthenticated('missing_api_key', 'Send Authorization: Bearer <API key>');
    const match = BEARER.exec(header);
    if (!match?.[1]) {
      throw unauthenticated('invalid_authorization_header', 'Use Authorization: Bearer <API key>');
    }
    if (portal && match[1].startsWith(PORTAL_TOKEN_PREFIX)) {
      await authenticatePortal(match[1], portal.route, portal.sessions, limits, req, res);
      next();
      return;
    }
    const key = await keys.findActiveByKey(match[1]);
    if (!key) throw unauthenticated('invalid_api_key', 'The API key is unknown or revoked');
    await limits.apply(res, key.id, key.rateLimit);
    if (!hasScope(key.scopes, scope)) throw insufficientScope(scope);
    req.auth = { tenantId: key.tenantId, keyId: key.id, scopes: key.scopes };
    // Best effort: a failure to record last use must not fail the request.
    track(keys.touch(key.id)).catch(() => undefined);
    next();
  };
}
