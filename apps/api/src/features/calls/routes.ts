import type { Deps } from '../../deps';
import { notFound } from '../../errors';
import { defineGetRoute } from '../../shared/resource-routes';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { pageBody, pageRequest } from '../../pagination/page';
import {
  callDetailExample,
  callDetailSchema,
  callListExample,
  callListItemExample,
  callListItemSchema,
  callListQuerySchema,
  callListResponseSchema,
  receptionistCallsQuerySchema,
} from './schemas';
import { idParamSchema, pageExample, paginated } from '../../shared/schemas';
import { callFilters } from './filters';
import { renderCallDetail, renderCallListItem } from '../../shared/call-render';

/** Call history: tenant-wide, per receptionist, and one call's detail. */
export function callRoutes(deps: Deps): RouteDef[] {
  const { calls, receptionists } = deps.stores;

  /** 404 unless the receptionist is the caller's: another tenant's id is not found. */
  const ownReceptionist = async (tenantId: string, id: string, param: string) => {
    if (!(await receptionists.get(deps.knex, tenantId, id))) throw notFound('receptionist', param);
  };

  return [
    defineRoute({
      method: 'get',
      path: '/calls',
      operationId: 'listCalls',
      summary: 'Tenant-wide call history, newest first',
      description:
        'Newest first by `started_at` (ties by id). Filters combine; a bare date in ' +
        '`date_from`/`date_to` means that whole UTC day. The answer is `{calls, next_cursor, ' +
        'scope}`; `next_cursor` is null on the last page. Cursors also work on ' +
        '`GET /receptionists/{id}/calls`.',
      tag: 'Calls',
      scope: 'read',
      query: callListQuerySchema,
      responses: {
        200: {
          description: 'A page of calls',
          schema: callListResponseSchema,
          example: callListExample,
        },
      },
      errors: { 404: 'resource_not_found: no such receptionist (receptionist_id) in this tenant' },
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const receptionistId = req.valid.query.receptionist_id as string | undefined;
        const filters = callFilters(req.valid.query);
        const page = pageRequest(req, deps.cursors, 'calls');
        if (receptionistId) await ownReceptionist(tenantId, receptionistId, 'receptionist_id');
        const result = await calls.list(
          tenantId,
          { ...filters, receptionistId, livemode: req.auth.livemode },
          page,
        );
        res.json({
          calls: result.rows.map(renderCallListItem),
          next_cursor: result.next ? deps.cursors.encode('calls', tenantId, result.next) : null,
          scope: receptionistId ? 'one_receptionist' : 'all_receptionists',
        });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/receptionists/:id/calls',
      operationId: 'listReceptionistCalls',
      summary: "One receptionist's call history, newest first",
      description:
        'The same calls, filters and cursors as `GET /calls`, as `{data, has_more, cursor}`.',
      tag: 'Calls',
      scope: 'read',
      params: idParamSchema('rcp'),
      query: receptionistCallsQuerySchema,
      responses: {
        200: {
          description: 'A page of calls',
          schema: paginated(callListItemSchema),
          example: pageExample(callListItemExample),
        },
      },
      errors: { 404: 'resource_not_found: no such receptionist in this tenant' },
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const receptionistId = req.valid.params.id as string;
        const filters = callFilters(req.valid.query);
        const page = pageRequest(req, deps.cursors, 'calls');
        await ownReceptionist(tenantId, receptionistId, 'id');
        const result = await calls.list(
          tenantId,
          { ...filters, receptionistId, livemode: req.auth.livemode },
          page,
        );
        res.json(pageBody(req, deps.cursors, 'calls', result, renderCallListItem));
      },
    }),
    defineGetRoute({
      path: '/calls/:id',
      operationId: 'getCall',
      summary: 'One call with transcript, recording, booking and cost',
      tag: 'Calls',
      scope: 'read',
      params: idParamSchema('call'),
      answer: { description: 'The call', schema: callDetailSchema, example: callDetailExample },
      errors: { 404: 'resource_not_found: no such call in this tenant' },
      name: 'call',
      find: (tenantId, id, livemode) => calls.get(deps.knex, tenantId, id, livemode),
      render: renderCallDetail,
    }),
  ];
}
