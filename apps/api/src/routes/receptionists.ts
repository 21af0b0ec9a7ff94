import type { FromSchema } from 'json-schema-to-ts';
import type { Receptionist } from '@switchboard/db';
import type { Deps } from '../deps';
import { insufficientScope, notFound } from '../errors';
import { hasScope } from '../http/auth';
import { defineRoute, type RouteDef } from '../openapi/route';
import { pageBody, pageRequest } from '../pagination/page';
import { idParamSchema, pageQuerySchema, paginated } from '../schemas/common';
import { receptionistSchema, updateReceptionistBodySchema } from '../schemas/receptionist';
import { checkSubscriptionUrl } from './webhook-url';

type UpdateReceptionistBody = FromSchema<typeof updateReceptionistBodySchema>;

/**
 * The public read shape of a receptionist (CONTRACT.md section 8). The legacy webhook's
 * signing secret is not part of the domain object, so it cannot leak through here.
 */
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
    defineRoute({
      method: 'patch',
      path: '/receptionists/:id',
      summary: 'Update name and greeting (write); setting or clearing webhook_url needs admin',
      tag: 'Receptionists',
      scope: 'write',
      params: idParamSchema('rcp'),
      body: updateReceptionistBodySchema,
      responses: { 200: { description: 'The updated receptionist', schema: receptionistSchema } },
      handler: async (req, res) => {
        const body = req.valid.body as UpdateReceptionistBody;
        // The key's scope is checked before anything about the receptionist is looked up, so
        // a 403 says nothing about whether the id exists.
        if (body.webhook_url !== undefined && !hasScope(req.auth.scopes, 'admin')) {
          throw insufficientScope('admin');
        }
        const webhookUrl =
          typeof body.webhook_url === 'string'
            ? await checkSubscriptionUrl(body.webhook_url, deps, 'webhook_url')
            : body.webhook_url;
        const updated = await receptionists.update(
          req.auth.tenantId,
          req.valid.params.id as string,
          { name: body.name, greeting: body.greeting, webhookUrl },
        );
        if (!updated) throw notFound('receptionist', 'id');
        res.json(renderReceptionist(updated));
      },
    }),
  ];
}
