import type { Receptionist } from '@switchboard/db';
import type { Deps } from '../deps';
import { notFound } from '../errors';
import { defineRoute, type RouteDef } from '../openapi/route';
import { pageBody, pageRequest } from '../pagination/page';
import { idParamSchema, pageQuerySchema, paginated } from '../schemas/common';
import { receptionistSchema } from '../schemas/receptionist';

/** The public read shape of a receptionist (CONTRACT.md section 8). */
export const renderReceptionist = (r: Receptionist) => ({
  id: r.id,
  name: r.name,
  status: r.status,
  phone_number: r.phoneNumber,
  assistant_id: r.assistantId,
  plan: r.plan,
  greeting: r.greeting,
  webhook_url: r.webhookUrl,
  created_at: r.createdAt.toISOString(),
  provisioned_at: r.provisionedAt?.toISOString() ?? null,
});

export function receptionistRoutes(deps: Deps): RouteDef[] {
  const { receptionists } = deps.stores;
  return [
    defineRoute({
      method: 'get',
      path: '/receptionists',
      summary: 'List receptionists, newest first',
      tag: 'Receptionists',
      scope: 'read',
      query: pageQuerySchema,
      responses: {
        200: { description: 'A page of receptionists', schema: paginated(receptionistSchema) },
      },
      handler: async (req, res) => {
        const page = await receptionists.list(
          req.auth.tenantId,
          pageRequest(req, deps.cursors, 'receptionists'),
        );
        res.json(pageBody(req, deps.cursors, 'receptionists', page, renderReceptionist));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/receptionists/:id',
      summary: 'Get a receptionist',
      tag: 'Receptionists',
      scope: 'read',
      params: idParamSchema('rcp'),
      responses: { 200: { description: 'The receptionist', schema: receptionistSchema } },
      handler: async (req, res) => {
        const found = await receptionists.get(req.auth.tenantId, req.valid.params.id as string);
        if (!found) throw notFound('receptionist', 'id');
        res.json(renderReceptionist(found));
      },
    }),
  ];
}
