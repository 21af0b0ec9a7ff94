import { Router } from 'express';
import type { ApiKeysStore, PortalSessionsStore } from '@switchboard/db';
import type { AnonymousLimits } from '../http/anonymous-limit';
import { portalSubscriptionGuard } from '../http/portal-auth';
import { authenticate } from '../http/auth';
import { isLiveOnly, liveOnly, subscriptionModeGuard } from '../http/mode-guard';
import type { KeyRateLimits } from '../http/key-rate-limit';
import { jsonBody, requireContentType } from '../http/json-body';
import type { Lifecycle } from '../http/lifecycle';
import { fromMiddleware, runSteps, type Step } from '../http/step';
import { validatePart } from '../http/validation';
import { ApiError } from '../errors';
import type { RouteDef } from './route';

/** Every route but GET and DELETE parses a JSON body (413, 415, malformed JSON 400). */
export const parsesJsonBody = (route: Pick<RouteDef, 'method' | 'rawBody'>): boolean =>
  !route.rawBody && route.method !== 'get' && route.method !== 'delete';

/**
 * Mounts declared routes on a router: auth (key, rate limit, scope) → body parsing → validation of params,
 * query and body → handler, the steps of a route in one handler (http/step.ts). Paths that
 * exist with other methods answer 405 with `Allow`. A request's steps are tracked by the
 * lifecycle as one piece of work, so a shutdown waits for them to end.
 */
export function buildRouter(
  routes: readonly RouteDef[],
  keys: ApiKeysStore,
  limits: KeyRateLimits,
  anonymous: AnonymousLimits,
  lifecycle: Lifecycle,
  portal: {
    sessions: PortalSessionsStore;
    /** Whether the tenant has this subscription (for the limited-session guard). */
    subscriptionExists: (tenantId: string, id: string) => Promise<boolean>;
    /** The mode of the tenant's subscription, undefined when it has none such (mode guard). */
    subscriptionMode: (tenantId: string, id: string) => Promise<boolean | undefined>;
  },
): Router {
  const router = Router();
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    const chain: Step[] = [];
    if (route.scope) {
      chain.push(
        authenticate(keys, limits, anonymous, route.scope, (w) => lifecycle.track(w), {
          sessions: portal.sessions,
          route,
        }),
      );
    }
    if (route.scope && isLiveOnly(route)) chain.push(liveOnly);
    if (route.rawBody) chain.push(fromMiddleware(requireContentType(route.rawBody.contentType)));
    else if (parsesJsonBody(route)) chain.push(fromMiddleware(jsonBody));
    if (route.params) chain.push(validatePart('params', route.params));
    if (route.portal?.subscriptions === 'path') {
      chain.push(portalSubscriptionGuard(portal.subscriptionExists));
      chain.push(subscriptionModeGuard(portal.subscriptionMode));
    }
    if (route.query) chain.push(validatePart('query', route.query));
    if (route.body) chain.push(validatePart('body', route.body));
    chain.push(route.handler);
    router[route.method](route.path, lifecycle.tracked(runSteps(chain)));
    methodsByPath.set(route.path, [
      ...(methodsByPath.get(route.path) ?? []),
      route.method.toUpperCase(),
    ]);
  }
  for (const [path, methods] of methodsByPath) {
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    router.all(path, (req) => {
      throw new ApiError(
        405,
        'invalid_request_error',
        'method_not_allowed',
        `${req.method} is not allowed here; use ${allow.join(', ')}`,
        null,
        { Allow: allow.join(', ') },
      );
    });
  }
  return router;
}
