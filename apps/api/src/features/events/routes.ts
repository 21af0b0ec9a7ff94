import { timeOfId } from '@switchboard/db';
import { buildEnvelope } from '@switchboard/events';
import type { Deps } from '../../deps';
import { notFound } from '../../errors';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { pageBody, pageRequest } from '../../pagination/page';
import { pageExample, paginated } from '../../shared/schemas';
import { eventFilter, eventRetention, expiredEvent, ownReceptionistFilter } from './filters';
import { eventExample, eventListQuerySchema, eventParamSchema, eventSchema } from './schemas';
import { eventStreamRoute } from './stream-route';

export const EVENTS_TAG = 'Events';

/**
 * The tenant's event log (read): every event it was sent or could have been sent by webhook,
 * operational ones included, each as the exact envelope a webhook carries (buildEnvelope,
 * the worker's own), for as long as the tenant keeps its delivery history.
 */
export function eventRoutes(deps: Deps): RouteDef[] {
  const { eventLog } = deps.stores;
  return [
    defineRoute({
      method: 'get',
      path: '/events',
      operationId: 'listEvents',
      summary: "The tenant's events, newest first",
      description:
        'Newest first by `created_at` (ties by id), as the envelopes webhooks carry. Filters ' +
        'combine: `type` (repeatable), `created_from` / `created_to` (a bare date means that ' +
        'whole UTC day), `receptionist_id`. Events are kept as long as the tenant keeps its ' +
        'delivery history (30 days by default).',
      tag: EVENTS_TAG,
      scope: 'read',
      query: eventListQuerySchema,
      responses: {
        200: {
          description: 'A page of events',
          schema: paginated(eventSchema),
          example: pageExample(eventExample),
        },
      },
      errors: { 404: 'resource_not_found: no such receptionist (receptionist_id) in this tenant' },
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const filter = eventFilter(req.valid.query, req.auth.livemode);
        const page = pageRequest(req, deps.cursors, 'events');
        await ownReceptionistFilter(deps, tenantId, filter);
        const { since } = await eventRetention(deps, tenantId);
        const result = await eventLog.page(tenantId, filter, since, page);
        res.json(pageBody(req, deps.cursors, 'events', result, buildEnvelope));
      },
    }),
    // Before /events/:id, which would take `stream` for an id.
    eventStreamRoute(deps, EVENTS_TAG),
    defineRoute({
      method: 'get',
      path: '/events/:id',
      operationId: 'getEvent',
      summary: 'One event, as its webhook carries it',
      description:
        'A portal token (`view`) reads only an event delivered to a subscription its session ' +
        'sees (every subscription of the tenant, or those the session is limited to); any ' +
        'other is a 404 as an unknown id.',
      tag: EVENTS_TAG,
      scope: 'read',
      // The portal's event page, from its delivery log: a portal session reads only the
      // events delivered to the subscriptions it sees (docs/decisions/0109-portal-event-page.md).
      portal: { capability: 'view', subscriptions: 'filter' },
      params: eventParamSchema,
      responses: { 200: { description: 'The event', schema: eventSchema, example: eventExample } },
      errors: {
        404: "resource_not_found: no such event in this tenant, or older than the tenant's event history",
      },
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const id = req.valid.params.id as string;
        const retention = await eventRetention(deps, tenantId);
        const event = await eventLog.get(tenantId, id, retention.since, req.auth.livemode);
        const portal = req.auth.portal;
        if (event && portal) {
          const seen = portal.subscriptionIds ?? null;
          if (!(await deps.stores.deliveries.eventDelivered(tenantId, id, seen))) {
            throw notFound('event', 'id');
          }
        }
        if (event) {
          res.json(buildEnvelope(event));
          return;
        }
        // The id's own time says whether it is past the history kept (and nothing else).
        const at = timeOfId(id);
        throw at && at < retention.since
          ? expiredEvent(id, 'id', retention)
          : notFound('event', 'id');
      },
    }),
  ];
}
