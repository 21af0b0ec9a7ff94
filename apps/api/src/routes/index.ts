import type { Deps } from '../deps';
import type { RouteDef } from '../openapi/route';
import { receptionistRoutes } from './receptionists';

/** Every public route under /api/v1 (and its /v1 alias), in OpenAPI order. */
export function publicRoutes(deps: Deps): RouteDef[] {
  return [...receptionistRoutes(deps)];
}
