import type { Deps } from '../../deps';
import { defineCreateRoute } from '../../shared/resource-routes';
import type { RouteDef } from '../../openapi/route';
import { startOutboundCall, type OutboundCallBody } from './start-call';
import {
  acceptedOutboundCallExample,
  acceptedOutboundCallSchema,
  outboundCallBodyExample,
  outboundCallBodySchema,
} from './schemas';

/**
 * POST /calls/outbound: queue a call for the dialler, idempotently (docs/API.md, Outbound
 * calls and idempotency).
 */
export function outboundCallRoutes(deps: Deps): RouteDef[] {
  return [
    defineCreateRoute<OutboundCallBody>(deps.idempotency, {
      path: '/calls/outbound',
      operationId: 'startOutboundCall',
      summary: 'Start an outbound call: queued now, dialled by the worker',
      description:
        'Answers 202 at once; the call then goes queued → ringing → in_progress → completed ' +
        '(or no_answer, busy, failed), reported by `call.started` and `call.completed` and in ' +
        'the call detail. Send an `Idempotency-Key` so that a retry can never call twice.',
      tag: 'Calls',
      scope: 'write',
      body: outboundCallBodySchema,
      bodyExample: outboundCallBodyExample,
      status: 202,
      answer: {
        description: 'The call is queued',
        schema: acceptedOutboundCallSchema,
        example: acceptedOutboundCallExample,
        location: 'The call: /api/v1/calls/{id}',
      },
      errors: {
        404: 'resource_not_found: no such receptionist (receptionist_id) in this tenant',
        409:
          'receptionist_not_ready, or idempotency_request_in_progress (the first request ' +
          'with this key still runs; Retry-After)',
        422: 'idempotency_key_reused: the same key came with another body',
      },
      create: (tenantId, body, scope, auth) =>
        startOutboundCall(deps, tenantId, body, scope, auth.livemode),
    }),
  ];
}
