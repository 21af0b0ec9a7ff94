import { Router, type RequestHandler } from 'express';
import type { ApiKeysStore } from '@switchboard/db';
import { authenticate } from '../http/auth';
import { jsonBody } from '../http/json-body';
import { validatePart } from '../http/validation';
import { ApiError } from '../errors';
import type { RouteDef } from './route';

/**
 * Mounts declared routes on a router: auth (scope) → body parsing → validation of params,
 * query and body → handler. Paths that exist with other methods answer 405 with `Allow`.
 */
export function buildRouter(routes: readonly RouteDef[], keys: ApiKeysStore): Router {
  const router = Router();
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    const chain: RequestHandler[] = [];
    if (route.scope) chain.push(authenticate(keys, route.scope));
    if (route.method !== 'get' && route.method !== 'delete') chain.push(jsonBody);
    if (route.params) chain.push(validatePart('params', route.params));
    if (route.query) chain.push(validatePart('query', route.query));
    if (route.body) chain.push(validatePart('body', route.body));
    chain.push(async (req, res) => {
      await route.handler(req, res);
    });
    router[route.method](route.path, ...chain);
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
