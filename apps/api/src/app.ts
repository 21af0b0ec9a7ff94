import type { RequestListener } from 'node:http';
import express, { type Express } from 'express';
import type { Deps } from './deps';
import { accessLog } from './http/access-log';
import { earlyRefusal, knownApiKey, type GuardedRoute } from './http/early-refusal';
import { errorHandler, notFoundRoute } from './http/error-handler';
import { requestId } from './http/request-id';
import { httpTracing } from './http/tracing';
import { httpMetrics, refusalMetrics } from './metrics/middleware';
import { buildOpenApi } from './openapi/document';
import type { RouteDef } from './openapi/route';
import { mountApiReference } from './openapi/reference-page';
import { buildRouter } from './openapi/register';
import { mountHealth } from './features/health/routes';
import { publicRoutes } from './features';
import {
  ingestTokenCheck,
  TELEPHONY_EVENTS_PATH,
  telephonyRouter,
} from './features/telephony/routes';
import { mountPortalPage } from './features/portal/page';

export type { Deps } from './deps';
export { createDeps } from './deps';

const API_VERSION = '1.0.0';
/** Every public route answers under both prefixes (/v1 is the shorthand). */
export const API_PREFIXES = ['/api/v1', '/v1'] as const;

/** The mount point of telephony ingestion (authenticated by INGEST_TOKEN). */
const INTERNAL_PREFIX = '/internal/v1';

/**
 * The routes whose requests without a valid credential take a token of their address's
 * bucket: every route with a scope (unless the key is known valid), those marked
 * `addressLimited`, and telephony ingestion (unless it carries INGEST_TOKEN).
 */
function guardedRoutes(deps: Deps, routes: readonly RouteDef[]): GuardedRoute[] {
  const apiKey = knownApiKey(deps.anonymousLimits);
  const guarded: GuardedRoute[] = routes.flatMap((route) => {
    if (!route.scope && !route.addressLimited) return [];
    const accepts = route.scope ? apiKey : () => false;
    return API_PREFIXES.map((prefix) => ({
      method: route.method.toUpperCase(),
      path: `${prefix}${route.path}`,
      accepts,
    }));
  });
  guarded.push({
    method: 'POST',
    path: `${INTERNAL_PREFIX}${TELEPHONY_EVENTS_PATH}`,
    accepts: ingestTokenCheck(deps.config.ingestToken),
  });
  return guarded;
}

/** The API as the HTTP server runs it. */
export interface Api {
  /** The Express app: every route, middleware and the error handler. */
  app: Express;
  /**
   * The server's request listener: the early refusal of addresses over their limit
   * (http/early-refusal.ts), then `app` for every other request.
   */
  listener: RequestListener;
}

/**
 * Builds the API from its dependencies. Express 5 forwards rejected promises from async
 * handlers to the error middleware, so no wrapper (express-async-errors) is needed.
 */
export function createApi(deps: Deps): Api {
  const routes = publicRoutes(deps);
  const app = createApp(deps, routes);
  const listener = earlyRefusal(app, {
    anonymous: deps.anonymousLimits,
    routes: guardedRoutes(deps, routes),
    trust: app.get('trust proxy fn') as (address: string, hop: number) => boolean,
    counted: refusalMetrics(deps.metrics),
    log: deps.refusalLog,
    lifecycle: deps.lifecycle,
  });
  return { app, listener };
}

/** The Express app of `routes`; requests refused early never reach it. */
function createApp(deps: Deps, routes: RouteDef[]): Express {
  const app = express();
  app.disable('x-powered-by');
  // ETags name versions of resources clients edit (http/if-match.ts), set by their routes;
  // no body hash of every answer (one meaning for ETag, and no hashing per response).
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Which proxies may name the client in X-Forwarded-For (TRUST_PROXY; none by default):
  // req.ip is the address the limit before authentication counts.
  app.set('trust proxy', deps.config.trustProxy);
  app.use(deps.lifecycle.middleware);
  app.use(httpMetrics(deps.metrics));
  app.use(requestId);
  // Tracing off, nothing is recorded or propagated (no provider, no propagator): no span.
  if (deps.config.tracing.enabled) app.use(httpTracing);
  // request_id, tenant_id and key_id come from the log context (http/request-id.ts).
  app.use(accessLog(deps.logger));
  mountHealth(app, deps);

  const openapi = buildOpenApi(routes, API_VERSION);
  app.get(
    API_PREFIXES.map((p) => `${p}/openapi.json`),
    (_req, res) => {
      res.json(openapi);
    },
  );
  mountApiReference(app, API_PREFIXES);
  app.use(
    [...API_PREFIXES],
    buildRouter(
      routes,
      deps.stores.apiKeys,
      deps.keyRateLimits,
      deps.anonymousLimits,
      deps.lifecycle,
      {
        sessions: deps.stores.portalSessions,
        subscriptionExists: async (tenantId, id) =>
          (await deps.stores.webhookSubscriptions.get(tenantId, id)) !== undefined,
        subscriptionMode: (tenantId, id) => deps.stores.webhookSubscriptions.modeOf(tenantId, id),
      },
    ),
  );
  app.use(INTERNAL_PREFIX, telephonyRouter(deps));
  mountPortalPage(app, deps);

  app.use(notFoundRoute);
  app.use(errorHandler(deps.logger));
  return app;
}
