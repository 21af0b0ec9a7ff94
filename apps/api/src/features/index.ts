import type { Deps } from '../deps';
import { receptionistRoutes } from './receptionists/routes';
import { usageRoutes } from './usage/routes';
import { smsRoutes } from './sms/routes';
import { leadRoutes } from './leads/routes';
import { mcpRoutes } from './mcp/routes';
import { campaignRoutes } from './campaigns/routes';
import type { RouteDef } from '../openapi/route';
import { callRoutes } from './calls/routes';
import { outboundCallRoutes } from './outbound-calls/routes';
import { webhookDeliveryRoutes } from './webhooks/delivery-routes';
import { webhookRoutes } from './webhooks/routes';
import { webhookEditRoutes } from './webhooks/edit-routes';
import { webhookDeliveryLogRoutes } from './webhooks/delivery-log-routes';
import { eventTypeRoutes } from './webhooks/event-types-route';
import { eventRoutes } from './events/routes';
import { webhookRecoverRoutes } from './webhooks/recover-routes';
import { portalRoutes } from './portal/routes';
import { webhookStatsRoutes } from './portal/stats-routes';
import { testDataRoutes } from './test-data/routes';

/** Every public route under /api/v1 (and its /v1 alias), in OpenAPI order. */
export function publicRoutes(deps: Deps): RouteDef[] {
  return [
    ...receptionistRoutes(deps),
    ...callRoutes(deps),
    ...outboundCallRoutes(deps),
    ...smsRoutes(deps),
    ...webhookRoutes(deps),
    ...webhookEditRoutes(deps),
    ...webhookDeliveryLogRoutes(deps),
    ...webhookDeliveryRoutes(deps),
    ...webhookRecoverRoutes(deps),
    ...eventTypeRoutes(),
    ...eventRoutes(deps),
    ...webhookStatsRoutes(deps),
    ...portalRoutes(deps),
    ...usageRoutes(deps),
    ...leadRoutes(deps),
    ...campaignRoutes(deps),
    ...mcpRoutes(deps),
    ...testDataRoutes(deps),
  ];
}
