import type { Deps } from '../../deps';
import { defineCreateRoute, defineGetRoute, locationHeaderDoc } from '../../shared/resource-routes';
import { defineRoute, type RouteDef } from '../../openapi/route';
import {
  etagHeaderDoc,
  ifMatchHeaderDoc,
  ifMatchOf,
  PRECONDITION_FAILED_DOC,
  sendVersioned,
} from '../../http/if-match';
import { idParamSchema } from '../../shared/schemas';
import { createReceptionist, type CreateReceptionistBody } from './create-receptionist';
import { reprovisionReceptionist } from './provision-receptionist';
import { renderReceptionist } from './render';
import {
  createReceptionistBodySchema,
  createReceptionistExample,
  provisioningReceptionistExample,
  receptionistExample,
  receptionistSchema,
  updateReceptionistBodySchema,
  updateReceptionistExample,
} from './schemas';
import { updateReceptionist, type UpdateReceptionistBody } from './update-receptionist';
import { defineListRoute } from '../../pagination/list-route';

const RECEPTIONIST_LOCATION = 'The receptionist: /api/v1/receptionists/{id}';

/**
 * Receptionists (docs/API.md, Receptionists): list, read, create (provisioned by the worker), provision
 * again after an error, and update. Their call history is with the calls routes.
 */
export function receptionistRoutes(deps: Deps): RouteDef[] {
  const { receptionists } = deps.stores;
  return [
    defineListRoute({
      path: '/receptionists',
      operationId: 'listReceptionists',
      summary: 'List receptionists, newest first',
      tag: 'Receptionists',
      scope: 'read',
      description: 'A page of receptionists',
      itemSchema: receptionistSchema,
      itemExample: receptionistExample,
      family: 'receptionists',
      cursors: deps.cursors,
      list: (tenantId, page) => receptionists.list(tenantId, page),
      render: renderReceptionist,
    }),
    defineCreateRoute<CreateReceptionistBody>(deps.idempotency, {
      path: '/receptionists',
      operationId: 'createReceptionist',
      summary: 'Create a receptionist: accepted now, provisioned by the worker (number, assistant)',
      tag: 'Receptionists',
      scope: 'write',
      body: createReceptionistBodySchema,
      bodyExample: createReceptionistExample,
      status: 202,
      answer: {
        description:
          'Accepted with status provisioning; it becomes ready (receptionist.ready) or ' +
          'error (receptionist.error)',
        schema: receptionistSchema,
        example: provisioningReceptionistExample,
        location: RECEPTIONIST_LOCATION,
      },
      errors: {
        409: 'idempotency_request_in_progress: the same key is still being processed (Retry-After)',
        422: 'idempotency_key_reused: the key was used with another body',
      },
      create: (tenantId, body, scope) => createReceptionist(deps, tenantId, body, scope),
    }),
    defineGetRoute({
      path: '/receptionists/:id',
      operationId: 'getReceptionist',
      summary: 'Get a receptionist',
      tag: 'Receptionists',
      scope: 'read',
      params: idParamSchema('rcp'),
      answer: {
        description: 'The receptionist',
        schema: receptionistSchema,
        example: receptionistExample,
      },
      errors: { 404: 'resource_not_found: no such receptionist in this tenant' },
      name: 'receptionist',
      find: (tenantId, id) => receptionists.get(deps.knex, tenantId, id),
      render: renderReceptionist,
      version: (r) => r.version,
    }),
    defineRoute({
      method: 'post',
      path: '/receptionists/:id/provision',
      operationId: 'provisionReceptionist',
      summary: 'Provision a receptionist in error again (a new round of attempts)',
      tag: 'Receptionists',
      scope: 'write',
      params: idParamSchema('rcp'),
      responses: {
        202: {
          description: 'Back to status provisioning',
          schema: receptionistSchema,
          example: provisioningReceptionistExample,
          headers: locationHeaderDoc(RECEPTIONIST_LOCATION),
        },
      },
      errors: {
        404: 'resource_not_found: no such receptionist in this tenant',
        409: 'invalid_state: the receptionist is not in error',
      },
      handler: async (req, res) => {
        const id = req.valid.params.id as string;
        const body = await reprovisionReceptionist(deps, req.auth.tenantId, id);
        res.setHeader('Location', `/api/v1/receptionists/${id}`);
        res.status(202).json(body);
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/receptionists/:id',
      operationId: 'updateReceptionist',
      summary: 'Update name and greeting (write); setting or clearing webhook_url needs admin',
      tag: 'Receptionists',
      scope: 'write',
      params: idParamSchema('rcp'),
      description:
        'Send at least one field. `webhook_url` (the legacy per-receptionist webhook) needs ' +
        'the `admin` scope and must be an https URL resolving to public addresses, or null. ' +
        'With If-Match, the change applies only to the version it names (docs/API.md, ' +
        'Conditional edits).',
      headers: [ifMatchHeaderDoc],
      body: updateReceptionistBodySchema,
      bodyExample: updateReceptionistExample,
      responses: {
        200: {
          description: 'The updated receptionist',
          schema: receptionistSchema,
          example: { ...receptionistExample, ...updateReceptionistExample },
          headers: etagHeaderDoc,
        },
      },
      errors: {
        403: 'insufficient_scope: setting or clearing webhook_url also needs the admin scope',
        404: 'resource_not_found: no such receptionist in this tenant',
        412: PRECONDITION_FAILED_DOC,
      },
      handler: async (req, res) => {
        const body = req.valid.body as UpdateReceptionistBody;
        const id = req.valid.params.id as string;
        const updated = await updateReceptionist(deps, req.auth, id, body, ifMatchOf(req));
        sendVersioned(res, updated.version, renderReceptionist(updated));
      },
    }),
  ];
}
