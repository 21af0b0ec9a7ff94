import type { Deps } from '../../deps';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { periodOf, readUsage } from './read-usage';
import { usageExample, usageQuerySchema, usageSchema } from './schemas';

/** Usage (docs/API.md, Usage): minutes and messages of a billing month, per tenant. */
export function usageRoutes(deps: Deps): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/usage',
      operationId: 'getUsage',
      summary: 'Minutes used this month (or ?period=YYYY-MM) against the plan, per receptionist',
      tag: 'Usage',
      scope: 'read',
      query: usageQuerySchema,
      responses: {
        200: {
          description: 'Usage of the billing period',
          schema: usageSchema,
          example: usageExample,
        },
      },
      handler: async (req, res) => {
        const period = periodOf(req.valid.query.period as string | undefined);
        res.json(await readUsage(deps, req.auth.tenantId, period));
      },
    }),
  ];
}
