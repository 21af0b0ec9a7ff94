import type { Deps } from '../deps';
import { receptionistRoutes } from '../features/receptionists/routes';
import { usageRoutes } from '../features/usage/routes';
import { smsRoutes } from '../features/sms/routes';
import { leadRoutes } from '../features/leads/routes';
import { mcpRoutes } from '../features/mcp/routes';
import { campaignRoutes } from '../features/campaigns/routes';
import type { RouteDef } from '../openapi/route';
import { callRoutes } from './calls';
import { outboundCallRoutes } from './outbound-calls';
import { webhookDeliveryRoutes } from './webhook-deliveries';
import { webhookRoutes } from './webhooks';

/** Every public route under /api/v1 (and its /v1 alias), in OpenAPI order. */
export function publicRoutes(deps: Deps): RouteDef[] {
  return [
    ...receptionistRoutes(deps),
    ...callRoutes(deps),
    ...outboundCallRoutes(deps),
    ...smsRoutes(deps),
    ...webhookRoutes(deps),
    ...webhookDeliveryRoutes(deps),
    ...usageRoutes(deps),
    ...leadRoutes(deps),
    ...campaignRoutes(deps),
    ...mcpRoutes(deps),
  ];
}
