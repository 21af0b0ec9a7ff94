import type { Deps } from '../deps';
import type { RouteDef } from '../openapi/route';
import { callRoutes } from './calls';
import { outboundCallRoutes } from './outbound-calls';
import { receptionistRoutes } from './receptionists';
import { webhookDeliveryRoutes } from './webhook-deliveries';
import { webhookRoutes } from './webhooks';

/** Every public route under /api/v1 (and its /v1 alias), in OpenAPI order. */
export function publicRoutes(deps: Deps): RouteDef[] {
  return [
    ...receptionistRoutes(deps),
    ...callRoutes(deps),
    ...outboundCallRoutes(deps),
    ...webhookRoutes(deps),
    ...webhookDeliveryRoutes(deps),
  ];
}
