import type { RequestHandler } from 'express';
import type { PortalSessionsStore } from '@switchboard/db';
import { ApiError, notFound, unauthenticated } from '../errors';
import type { RouteDef } from '../openapi/route';
import type { KeyRateLimits } from './key-rate-limit';
import type { Step } from './step';

export const PORTAL_TOKEN_PREFIX = 'pt_';

const portalScope = (message: string): ApiError =>
  new ApiError(403, 'permission_error', 'insufficient_scope', message);

/**
 * Authenticates a portal token (`pt_…`) on a route that declares `portal`. The session is
 * read on every request (no cache), so a revocation or an expiry applies from the next
 * request. The tenant is the session's; the capability the route needs must be granted.
 */
export async function authenticatePortal(
  token: string,
  route: Pick<RouteDef, 'portal'>,
  sessions: PortalSessionsStore,
  limits: KeyRateLimits,
  req: Parameters<RequestHandler>[0],
  res: Parameters<RequestHandler>[1],
): Promise<void> {
  const session = await sessions.findActiveByToken(token);
  if (!session) {
    throw unauthenticated('invalid_portal_token', 'This portal link expired or was revoked');
  }
  await limits.apply(res, session.id, session.rateLimit);
  const needed = route.portal;
  if (!needed) throw portalScope('A portal token cannot use this operation');
  if (!session.capabilities.includes(needed.capability)) {
    throw portalScope(`This portal link lacks the ${needed.capability} capability`);
  }
  if (session.subscriptionIds && needed.subscriptions === 'none') {
    throw portalScope('This portal link is limited to some subscriptions');
  }
  req.auth = {
    tenantId: session.tenantId,
    keyId: session.id,
    scopes: [],
    livemode: true,
    portal: {
      sessionId: session.id,
      capabilities: session.capabilities,
      subscriptionIds: session.subscriptionIds,
    },
  };
}

/**
 * After the path is validated: a session limited to some subscriptions may only name one of
 * them in the path. Another tenant's id stays a 404 (it is not in the list either, but the
 * answer must not tell it exists), so only ids of the caller's tenant get the 403.
 */
export function portalSubscriptionGuard(
  exists: (tenantId: string, id: string) => Promise<boolean>,
): Step {
  return async (req) => {
    const limited = req.auth?.portal?.subscriptionIds;
    if (limited) {
      const id = String(req.valid.params.id).toLowerCase();
      if (!limited.includes(id)) {
        if (!(await exists(req.auth.tenantId, id))) throw notFound('webhook subscription', 'id');
        throw portalScope('This portal link is not for this subscription');
      }
    }
  };
}
