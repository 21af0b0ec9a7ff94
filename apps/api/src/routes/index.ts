import type { Deps } from '../deps';
import type { RouteDef } from '../openapi/route';
import { callRoutes } from './calls';
import { receptionistRoutes } from './receptionists';
import { webhookRoutes } from './webhooks';

/** Every public route under /api/v1 (and its /v1 alias), in OpenAPI order. */
export function publicRoutes(deps: Deps): RouteDef[] {
  return [...receptionistRoutes(deps), ...callRoutes(deps), ...webhookRoutes(deps)];
}
