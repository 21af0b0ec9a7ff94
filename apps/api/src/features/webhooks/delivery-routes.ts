import type { Request } from 'express';
import type { FromSchema } from 'json-schema-to-ts';
import type { Delivery, DeliveryAttempt, WebhookSubscription } from '@switchboard/db';
import { enqueueFromRequest } from '@switchboard/queues';
import type { Deps } from '../../deps';
import { conflict, notFound } from '../../errors';
import { consumeAll, RateLimiter } from '../../http/rate-limit';
import { defineRoute, type RouteDef } from '../../openapi/route';
import {
  retriedWebhookDeliveryExample,
  webhookDeliveryParamSchema,
  webhookDeliverySchema,
} from './delivery-schemas';

type WebhookDeliveryBody = FromSchema<typeof webhookDeliverySchema>;

/** A delivery and every attempt of every round (oldest first), as the log shows it. */
export const renderDelivery = (
  d: Delivery & { eventType: string },
  attempts: readonly DeliveryAttempt[],
): WebhookDeliveryBody => ({
  id: d.id,
  subscription_id: d.subscriptionId ?? '',
  event_id: d.eventId,
  event_type: d.eventType,
  status: d.status,
  round: d.round,
  attempts: attempts.map((a) => ({
    round: a.round,
    attempt: a.attempt,
    status_code: a.statusCode,
    error: a.error,
    duration_ms: a.durationMs,
    response_excerpt: a.responseExcerpt,
    attempted_at: a.attemptedAt.toISOString(),
  })),
  next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
  created_at: d.createdAt.toISOString(),
  completed_at: d.completedAt?.toISOString() ?? null,
});

const TAG = 'Webhooks';

/**
 * A manual retry makes this service connect to the subscription's URL again, and the attempt
 * it records (status, error, response excerpt) tells open ports from closed ones just as a
 * test delivery does: limited like POST /webhooks/{id}/test (docs/API.md, Webhooks), in
 * buckets of its own so a retry after an outage does not spend the test budget. Without
 * Redis each API process keeps them in its own memory: a retry is committed work that the
 * reconciler enqueues later, so it stays available through an outage of Redis.
 */
export const WEBHOOK_RETRY_LIMITS = {
  subscription: {
    name: 'webhook-retry-subscription',
    points: 10,
    durationSec: 60,
    message: 'At most 10 manual retries a minute per subscription; retry after Retry-After',
    whenRedisFails: 'local',
  },
  tenant: {
    name: 'webhook-retry-tenant',
    points: 30,
    durationSec: 60,
    message: 'At most 30 manual retries a minute per account; retry after Retry-After',
    whenRedisFails: 'local',
  },
} as const;

/**
 * The delivery log of a subscription and manual retries (admin, like every /webhooks route).
 * The subscription is looked up with the caller's tenant first, so another tenant's
 * subscription, and every delivery under it, is a 404.
 */
export function webhookDeliveryRoutes(deps: Deps): RouteDef[] {
  const { webhookSubscriptions, deliveries, deliveryLifecycle, deliveryAttempts, events } =
    deps.stores;
  const retryLimits = {
    subscription: new RateLimiter(
      deps.redis,
      deps.config.queuePrefix,
      WEBHOOK_RETRY_LIMITS.subscription,
    ),
    tenant: new RateLimiter(deps.redis, deps.config.queuePrefix, WEBHOOK_RETRY_LIMITS.tenant),
  };

  const ownSubscription = async (req: Request): Promise<WebhookSubscription> => {
    const id = String(req.valid.params.id).toLowerCase();
    const subscription = await webhookSubscriptions.get(req.auth.tenantId, id);
    if (!subscription) throw notFound('webhook subscription', 'id');
    return subscription;
  };

  const attemptsOf = async (id: string): Promise<DeliveryAttempt[]> =>
    (await deliveryAttempts.forDeliveries([id])).get(id) ?? [];

  /**
   * The job for attempt 1 of the delivery's current round. The row is committed already and
   * is the truth: if Redis refuses the job, the worker's reconciler finds the overdue pending
   * row and adds the very same job (same deterministic id), so the retry still happens.
   */
  const enqueueFirstAttempt = async (d: Delivery, requestId: string): Promise<void> => {
    try {
      await enqueueFromRequest(deps.queues, deps.redis, 'deliveries', {
        data: { v: 1, deliveryId: d.id, round: d.round, attempt: 1 },
      });
    } catch (err) {
      deps.logger.warn(
        { err, deliveryId: d.id, round: d.round, requestId },
        'manual retry committed but not enqueued; the reconciler will enqueue it',
      );
    }
  };

  return [
    defineRoute({
      method: 'post',
      path: '/webhooks/:id/deliveries/:delivery_id/retry',
      operationId: 'retryWebhookDelivery',
      summary: 'Send one delivery again: a fresh round of attempts, whatever its state',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'recover', subscriptions: 'path' },
      params: webhookDeliveryParamSchema,
      responses: {
        202: {
          description: 'The delivery, reset to pending',
          schema: webhookDeliverySchema,
          example: retriedWebhookDeliveryExample,
        },
      },
      errors: {
        404: 'resource_not_found: no such subscription in this tenant, or no such delivery of it',
        409:
          'subscription_disabled (enable it first), or delivery_in_progress (an attempt is in ' +
          'flight; retry once it has finished)',
        429: 'rate_limited: over 10 retries a minute per subscription or 30 per tenant (Retry-After)',
      },
      handler: async (req, res) => {
        const subscription = await ownSubscription(req);
        const deliveryId = req.valid.params.delivery_id as string;
        const existing = await deliveries.get(deps.knex, deliveryId);
        if (!existing || existing.subscriptionId !== subscription.id) {
          throw notFound('delivery', 'delivery_id');
        }
        if (!subscription.isActive) {
          throw conflict(
            'subscription_disabled',
            'This subscription is disabled; enable it first (POST /api/v1/webhooks/{id}/enable)',
          );
        }
        // Counted once the request is known to start a round: a 404/409 spends nothing.
        await consumeAll([
          { limiter: retryLimits.subscription, key: subscription.id },
          { limiter: retryLimits.tenant, key: subscription.tenantId },
        ]);
        // An attempt in flight would write its outcome over the new round; wait for it.
        const claimed = (existing.lockedUntil?.getTime() ?? 0) > Date.now();
        if (existing.status === 'delivering' && claimed) {
          throw conflict(
            'delivery_in_progress',
            'An attempt of this delivery is in flight; retry once it has finished',
          );
        }
        const retried = await deliveryLifecycle.newRound(deps.knex, subscription.id, deliveryId);
        const event = retried && (await events.get(retried.eventId));
        if (!retried || !event) throw notFound('delivery', 'delivery_id'); // deleted meanwhile
        await enqueueFirstAttempt(retried, req.requestId);
        res
          .status(202)
          .json(
            renderDelivery({ ...retried, eventType: event.type }, await attemptsOf(retried.id)),
          );
      },
    }),
  ];
}
