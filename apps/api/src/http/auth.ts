import {
  hashApiKey,
  type ApiKeysStore,
  type PortalSessionsStore,
  type Scope,
} from '@switchboard/db';
import { addLogContext } from '@switchboard/logger';
import type { AnonymousLimits } from './anonymous-limit';
import { insufficientScope, unauthenticated } from '../errors';
import type { RouteDef } from '../openapi/route';
import type { KeyRateLimits } from './key-rate-limit';
import { authenticatePortal, PORTAL_TOKEN_PREFIX } from './portal-auth';
import type { Step } from './step';

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
 * the route's scope. Keys come from ApiKeysStore's caches (active keys for ACTIVE_KEY_TTL_MS
 * while the process hears of changes, which drop them), so a revoked key is refused, and a
 * tenant's new rate limit applies, from the next request in practice and within
 * ACTIVE_KEY_TTL_MS at worst; the limit is spent from leases (KeyRateLimits). Every request of a known key
 * is counted, refused ones too, and its answer carries the RateLimit headers whatever its
 * status. A request with no key, a malformed one, or a key this process has not seen valid
 * lately first takes a token of its address's bucket (AnonymousLimits), before any lookup.
 * `track` counts the write that outlives the request (last use of a key or a portal session),
 * so a shutdown waits for it.
 */
export function authenticate(
  keys: ApiKeysStore,
  limits: KeyRateLimits,
  anonymous: AnonymousLimits,
  scope: Scope,
  track: (work: Promise<unknown>) => Promise<unknown> = (work) => work,
  portal?: { sessions: PortalSessionsStore; route: Pick<RouteDef, 'portal'> },
): Step {
  return async (req, res) => {
    const header = req.headers.authorization;
    const match = header ? BEARER.exec(header) : null;
    const presented = match?.[1];
    const hash = presented && hashApiKey(presented);
    if (!hash || !anonymous.isKnown(hash)) await anonymous.count(req);
    if (!header) throw unauthenticated('missing_api_key', 'Send Authorization: Bearer <API key>');
    if (!presented || !hash) {
      throw unauthenticated('invalid_authorization_header', 'Use Authorization: Bearer <API key>');
    }
    if (portal && presented.startsWith(PORTAL_TOKEN_PREFIX)) {
      await authenticatePortal(presented, portal.route, portal.sessions, limits, req, res);
      anonymous.remember(hash);
      addLogContext({ tenant_id: req.auth.tenantId, portal_session_id: req.auth.keyId });
      // Best effort, as for keys: the session's last use (GET /portal/sessions shows it).
      track(portal.sessions.touch(req.auth.keyId)).catch(() => undefined);
      return;
    }
    const key = await keys.findActiveByHash(hash);
    if (!key) throw unauthenticated('invalid_api_key', 'The API key is unknown or revoked');
    anonymous.remember(hash);
    addLogContext({
      tenant_id: key.tenantId,
      key_id: key.id,
      ...(key.livemode ? {} : { mode: 'test' }),
    });
    await limits.apply(res, key.id, key.rateLimit);
    if (!hasScope(key.scopes, scope)) throw insufficientScope(scope);
    req.auth = {
      tenantId: key.tenantId,
      keyId: key.id,
      scopes: key.scopes,
      livemode: key.livemode,
    };
    // Best effort: a failure to record last use must not fail the request.
    track(keys.touch(key.id)).catch(() => undefined);
  };
}
