import type { Deps } from '../deps';
import { invalidParameter } from '../errors';
import {
  fingerprintBody,
  IDEMPOTENCY_HEADER,
  parseIdempotencyKey,
  type IdempotentResponse,
} from '../idempotency';
import { defineRoute, type RouteDef } from '../openapi/route';
import { isE164 } from '../outbound/phone';
import { startOutboundCall, type OutboundCallBody } from '../outbound/start-call';
import { errorBodySchema } from '../schemas/common';
import { acceptedOutboundCallSchema, outboundCallBodySchema } from '../schemas/outbound-call';

/** POST /calls/outbound: queue a call for the dialler, idempotently (CONTRACT.md section 5). */
export function outboundCallRoutes(deps: Deps): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/calls/outbound',
      summary: 'Start an outbound call: queued now, dialled by the worker',
      tag: 'Calls',
      scope: 'write',
      body: outboundCallBodySchema,
      headers: [
        {
          name: IDEMPOTENCY_HEADER,
          description:
            '1-255 printable ASCII characters. A retry with the same key and body returns the ' +
            'original response with Idempotent-Replayed: true and never starts a second call',
        },
      ],
      responses: {
        202: { description: 'The call is queued', schema: acceptedOutboundCallSchema },
        409: {
          description: 'receptionist_not_ready, or idempotency_request_in_progress (Retry-After)',
          schema: errorBodySchema,
        },
        422: { description: 'idempotency_key_reused', schema: errorBodySchema },
        503: { description: 'Redis is unavailable (Retry-After)', schema: errorBodySchema },
      },
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const body = req.valid.body as OutboundCallBody;
        if (!isE164(body.to)) {
          throw invalidParameter(
            'to',
            'to must be a valid phone number in E.164 format, e.g. +14155550123',
          );
        }
        const key = parseIdempotencyKey(req.headers['idempotency-key']);
        let result: IdempotentResponse;
        if (key === null) {
          result = await startOutboundCall(deps, tenantId, body, null);
        } else {
          const fingerprint = fingerprintBody(body);
          result = await deps.idempotency.run(tenantId, key, fingerprint, () =>
            startOutboundCall(deps, tenantId, body, { key, fingerprint }),
          );
        }
        if (result.location) res.setHeader('Location', result.location);
        if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
        res.status(result.status).json(result.body);
      },
    }),
  ];
}
