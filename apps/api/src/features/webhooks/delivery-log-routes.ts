import type { Request } from 'express';
import type { FromSchema } from 'json-schema-to-ts';
import type { DeliveryFilter, DeliveryStatus, WebhookSubscription } from '@switchboard/db';
import { buildEnvelope } from '@switchboard/events';
import type { Deps } from '../../deps';
import { invalidParameter, notFound } from '../../errors';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { pageBody, pageRequest } from '../../pagination/page';
import { pageExample, paginated, subscriptionNotFoundDoc } from '../../shared/schemas';
import { renderDelivery } from './delivery-routes';
import {
  deliveryLogQuerySchema,
  tenantDeliveryLogQuerySchema,
  webhookDeliveriesParamSchema,
  webhookDeliveryDetailExample,
  webhookDeliveryDetailSchema,
  webhookDeliveryExample,
  webhookDeliveryParamSchema,
  webhookDeliverySchema,
} from './delivery-schemas';

type DetailBody = FromSchema<typeof webhookDeliveryDetailSchema>;

const TAG = 'Webhooks';

/** The status filter as stored statuses: pending includes an attempt in flight. */
const STATUSES: Record<string, DeliveryStatus[]> = {
  pending: ['pending', 'delivering'],
  succeeded: ['succeeded'],
  failed: ['failed'],
  cancelled: ['canceled'],
  canceled: ['canceled'],
};

/** The validated filters of a delivery log; `until` not after `since` is a 400. */
export function deliveryFilter(query: Record<string, unknown>): DeliveryFilter {
  const filter: DeliveryFilter = {};
  if (typeof query.status === 'string') filter.statuses = STATUSES[query.status];
  if (typeof query.event === 'string') filter.event = query.event;
  if (typeof query.since === 'string') filter.since = new Date(query.since);
  if (typeof query.until === 'string') filter.until = new Date(query.until);
  if (filter.since && filter.until && filter.until <= filter.since) {
    throw invalidParameter('until', 'until must be after since');
  }
  return filter;
}

/**
 * The delivery logs (admin, like every /webhooks route): one subscription's, filtered; the
 * tenant's, filtered and optionally by subscription; one delivery in full. The tenant is part
 * of every lookup, so another tenant's subscription or delivery is a 404.
 */
export function webhookDeliveryLogRoutes(deps: Deps): RouteDef[] {
  const { webhookSubscriptions, deliveries, deliveryAttempts, events } = deps.stores;

  const ownSubscription = async (req: Request): Promise<WebhookSubscription> => {
    const id = String(req.valid.params.id).toLowerCase();
    const subscription = await webhookSubscriptions.get(req.auth.tenantId, id);
    if (!subscription) throw notFound('webhook subscription', 'id');
    return subscription;
  };

  const listPage = async (req: Request, filter: DeliveryFilter) => {
    const page = await deliveries.list(filter, pageRequest(req, deps.cursors, 'deliveries'));
    const attempts = await deliveryAttempts.forDeliveries(page.rows.map((d) => d.id));
    return pageBody(req, deps.cursors, 'deliveries', page, (d) =>
      renderDelivery(d, attempts.get(d.id) ?? []),
    );
  };

  const filterErrors = { 400: 'invalid_parameter: a bad filter, or until not after since' };

  return [
    defineRoute({
      method: 'get',
      path: '/webhooks/:id/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: "A subscription's deliveries with every attempt, newest first, filtered",
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'view', subscriptions: 'path' },
      params: webhookDeliveriesParamSchema,
      query: deliveryLogQuerySchema,
      responses: {
        200: {
          description: 'A page of deliveries',
          schema: paginated(webhookDeliverySchema),
          example: pageExample(webhookDeliveryExample),
        },
      },
      errors: {
        ...filterErrors,
        ...subscriptionNotFoundDoc,
      },
      handler: async (req, res) => {
        const subscription = await ownSubscription(req);
        const filter = deliveryFilter(req.valid.query);
        res.json(
          await listPage(req, {
            ...filter,
            tenantId: req.auth.tenantId,
            subscriptionId: subscription.id,
          }),
        );
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhook-deliveries',
      operationId: 'listTenantWebhookDeliveries',
      summary: "Every subscription's deliveries, newest first, filtered",
      tag: TAG,
      scope: 'admin',
      query: tenantDeliveryLogQuerySchema,
      responses: {
        200: {
          description: 'A page of deliveries',
          schema: paginated(webhookDeliverySchema),
          example: pageExample(webhookDeliveryExample),
        },
      },
      errors: filterErrors,
      handler: async (req, res) => {
        const filter = deliveryFilter(req.valid.query);
        const only = req.valid.query.subscription_id;
        res.json(
          await listPage(req, {
            ...filter,
            tenantId: req.auth.tenantId,
            livemode: req.auth.livemode,
            ...(typeof only === 'string' ? { subscriptionId: only.toLowerCase() } : {}),
          }),
        );
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/:id/deliveries/:delivery_id',
      operationId: 'getWebhookDelivery',
      summary: 'One delivery: the payload as signed and every attempt with its headers',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'view', subscriptions: 'path' },
      params: webhookDeliveryParamSchema,
      responses: {
        200: {
          description: 'The delivery',
          schema: webhookDeliveryDetailSchema,
          example: webhookDeliveryDetailExample,
        },
      },
      errors: {
        404: 'resource_not_found: no such subscription in this tenant, or no such delivery of it',
      },
      handler: async (req, res) => {
        const subscription = await ownSubscription(req);
        const d = await deliveries.get(deps.knex, String(req.valid.params.delivery_id));
        const event = d?.subscriptionId === subscription.id && (await events.get(d.eventId));
        if (!d || !event) throw notFound('delivery', 'delivery_id');
        const attempts = (await deliveryAttempts.forDeliveries([d.id])).get(d.id) ?? [];
        const body: DetailBody = {
          id: d.id,
          subscription_id: subscription.id,
          event_id: d.eventId,
          event: event.type,
          status: d.status,
          // The worker signs JSON.stringify of this very envelope (same builder, same row).
          payload: { ...buildEnvelope(event) },
          attempts: attempts.map((a) => ({
            round: a.round,
            attempt: a.attempt,
            attempted_at: a.attemptedAt.toISOString(),
            duration_ms: a.durationMs,
            request_headers: a.requestHeaders,
            status_code: a.statusCode,
            response_headers: a.responseHeaders,
            response_excerpt: a.responseExcerpt,
            error: a.error,
          })),
          created_at: d.createdAt.toISOString(),
          completed_at: d.completedAt?.toISOString() ?? null,
        };
        res.json(body);
      },
    }),
  ];
}
