import type { Deps } from '../../deps';
import { conflict, notFound } from '../../errors';
import { defineCreateRoute, defineGetRoute } from '../../shared/resource-routes';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { dateRange } from '../../pagination/date-range';
import { pageBody, pageRequest } from '../../pagination/page';
import { idParamSchema, pageExample, paginated } from '../../shared/schemas';
import { renderSms } from './render';
import {
  queuedSmsExample,
  sendSmsBodyExample,
  sendSmsBodySchema,
  sentSmsExample,
  smsHistoryQuerySchema,
  smsSchema,
} from './schemas';
import { optOutsRoute } from './opt-outs';
import { sendSms, type SendSmsBody } from './send-sms';

/** SMS (docs/API.md, SMS): send, schedule and cancel, one message, history, opt-outs. */
export function smsRoutes(deps: Deps): RouteDef[] {
  const { sms, receptionists } = deps.stores;
  return [
    defineCreateRoute<SendSmsBody>(deps.idempotency, {
      path: '/sms/send',
      operationId: 'sendSms',
      summary: 'Send an SMS from a receptionist: queued now, sent by the worker',
      tag: 'SMS',
      scope: 'write',
      body: sendSmsBodySchema,
      bodyExample: sendSmsBodyExample,
      status: 202,
      answer: {
        description: 'The message is queued',
        schema: smsSchema,
        example: queuedSmsExample,
        location: 'The message: /api/v1/sms/{id}',
      },
      errors: {
        400: 'invalid_parameter: send_at not 60 seconds to 30 days ahead (or not a date-time)',
        404: 'resource_not_found: receptionist_id is not a receptionist of this account',
        409:
          'receptionist_not_ready; or idempotency_request_in_progress (Retry-After: 1) while ' +
          'the first request with this Idempotency-Key runs',
        422:
          'recipient_opted_out: the recipient replied STOP (nothing is stored or sent); or ' +
          'idempotency_key_reused: the key was used with another body',
      },
      create: (tenantId, body, scope, auth) => sendSms(deps, tenantId, body, scope, auth.livemode),
    }),
    // Before /sms/:id, which would take "opt-outs" for an id.
    optOutsRoute(deps),
    defineRoute({
      method: 'delete',
      path: '/sms/:id',
      operationId: 'cancelSms',
      summary: 'Cancel a scheduled SMS before it goes',
      tag: 'SMS',
      scope: 'write',
      params: idParamSchema('sms'),
      responses: { 204: { description: 'Cancelled: it will not be sent' } },
      errors: {
        404: 'resource_not_found: no such message in this account',
        409: 'not_cancellable: the message is not scheduled (queued, sent, cancelled, ...)',
      },
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const id = req.valid.params.id as string;
        const { livemode } = req.auth;
        if (await deps.stores.smsLifecycle.cancel(deps.knex, tenantId, id, livemode)) {
          res.status(204).end();
          return;
        }
        const found = await sms.get(tenantId, id, livemode);
        if (!found) throw notFound('SMS', 'id');
        throw conflict(
          'not_cancellable',
          `SMS ${id} is ${found.status}; only a scheduled message can be cancelled`,
        );
      },
    }),
    defineGetRoute({
      path: '/sms/:id',
      operationId: 'getSms',
      summary: 'Get one SMS, inbound or outbound',
      tag: 'SMS',
      scope: 'read',
      params: idParamSchema('sms'),
      answer: { description: 'The message', schema: smsSchema, example: sentSmsExample },
      errors: { 404: 'resource_not_found: no such message in this account' },
      name: 'SMS',
      find: (tenantId, id, livemode) => sms.get(tenantId, id, livemode),
      render: renderSms,
    }),
    defineRoute({
      method: 'get',
      path: '/receptionists/:id/sms',
      operationId: 'listReceptionistSms',
      summary: "One receptionist's SMS history, both directions, newest first",
      tag: 'SMS',
      scope: 'read',
      params: idParamSchema('rcp'),
      query: smsHistoryQuerySchema,
      responses: {
        200: {
          description: 'A page of messages',
          schema: paginated(smsSchema),
          example: pageExample(sentSmsExample),
        },
      },
      errors: { 404: 'resource_not_found: no such receptionist in this account' },
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const receptionistId = req.valid.params.id as string;
        const query = req.valid.query;
        const filters = {
          livemode: req.auth.livemode,
          direction: query.direction as 'inbound' | 'outbound' | undefined,
          ...dateRange(query),
        };
        const page = pageRequest(req, deps.cursors, 'sms');
        if (!(await receptionists.get(deps.knex, tenantId, receptionistId))) {
          throw notFound('receptionist', 'id');
        }
        const result = await sms.listForReceptionist(tenantId, receptionistId, filters, page);
        res.json(pageBody(req, deps.cursors, 'sms', result, renderSms));
      },
    }),
  ];
}
