import type { SmsOptOut } from '@switchboard/db';
import type { Deps } from '../../deps';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { pageBody, pageRequest } from '../../pagination/page';
import {
  cursorSchema,
  limitSchema,
  pageExample,
  paginated,
  phoneNumber,
  timestamp,
} from '../../shared/schemas';

const optOutSchema = {
  title: 'SmsOptOut',
  type: 'object',
  required: ['phone', 'keyword', 'opted_out_at'],
  properties: {
    phone: { type: 'string', description: 'The number that opted out (E.164)' },
    keyword: {
      type: ['string', 'null'],
      description: 'The keyword it sent, letters only, upper case (STOP, UNSUBSCRIBE, ...)',
    },
    opted_out_at: { ...timestamp, description: 'When it sent the keyword' },
  },
} as const;

const optOutsQuerySchema = {
  type: 'object',
  properties: {
    limit: limitSchema,
    cursor: cursorSchema,
    phone: phoneNumber('phone', 'Only this number'),
  },
} as const;

const render = (o: SmsOptOut) => ({
  phone: o.phone,
  keyword: o.keyword,
  opted_out_at: o.optedOutAt.toISOString(),
});

/**
 * GET /sms/opt-outs (docs/API.md, SMS): the numbers that opted out of the tenant's SMS,
 * newest first. Read only: an opt-out ends only by the recipient's own START, as carriers
 * require, so no route removes one.
 */
export function optOutsRoute(deps: Deps): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/sms/opt-outs',
    operationId: 'listSmsOptOuts',
    summary: 'List the numbers that opted out of your SMS (replied STOP), newest first',
    tag: 'SMS',
    scope: 'read',
    query: optOutsQuerySchema,
    responses: {
      200: {
        description: 'A page of opt-outs',
        schema: paginated(optOutSchema),
        example: pageExample({
          phone: '+14155550123',
          keyword: 'STOP',
          opted_out_at: '2026-11-21T10:20:00.000Z',
        }),
      },
    },
    handler: async (req, res) => {
      const page = pageRequest(req, deps.cursors, 'sms-opt-outs');
      const phone = req.valid.query.phone as string | undefined;
      const result = await deps.stores.smsOptOuts.list(req.auth.tenantId, { phone }, page);
      res.json(pageBody(req, deps.cursors, 'sms-opt-outs', result, render));
    },
  });
}
