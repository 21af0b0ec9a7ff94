import type { FromSchema } from 'json-schema-to-ts';
import type { WebhookSubscription } from '@switchboard/db';
import type { Deps } from '../../deps';
import { subscriptionNotFoundDoc, webhookIdParamSchema } from '../../shared/schemas';
import { notFound } from '../../errors';
import { idempotencyKeyHeaderDoc, idempotentReplayHeaderDoc } from '../../idempotency';
import {
  ifMatchHeaderDoc,
  ifMatchOf,
  PRECONDITION_FAILED_DOC,
  sendVersioned,
} from '../../http/if-match';
import { consumeAll, RateLimiter } from '../../http/rate-limit';
import { defineRoute, type RouteDef } from '../../openapi/route';
import {
  createdWebhookSubscriptionExample,
  createdWebhookSubscriptionSchema,
  createWebhookBodyExample,
  createWebhookBodySchema,
  subscriptionAnswer,
  webhookSubscriptionExample,
  webhookSubscriptionSchema,
  webhookTestResultExample,
  webhookTestResultSchema,
} from './schemas';
import { respondCreateWebhook } from './create-webhook';
import { wakeSubscription } from './edit-routes';
import { renderWebhookSubscription } from './render';
import { sendTestDelivery } from './test-delivery';
import { defineListRoute } from '../../pagination/list-route';

export { renderWebhookSubscription, SECRET_WARNING } from './render';

type CreateWebhookBody = FromSchema<typeof createWebhookBodySchema>;

const TAG = 'Webhooks';

/**
 * A test delivery makes this service connect to a URL of the caller's choice, and its result
 * tells open ports from closed ones: limited per subscription (docs/API.md, Webhooks) and, so
 * that many subscriptions do not multiply the budget, per tenant. Token buckets like every
 * limit of the API: 10 at once, then one every 6 s (30 and one every 2 s per tenant). Without
 * Redis they refuse (503): this is no route to keep open at any price.
 */
export const WEBHOOK_TEST_LIMITS = {
  subscription: {
    name: 'webhook-test-subscription',
    points: 10,
    durationSec: 60,
    message: 'At most 10 test deliveries a minute per subscription; retry after Retry-After',
    whenRedisFails: 'refuse',
  },
  tenant: {
    name: 'webhook-test-tenant',
    points: 30,
    durationSec: 60,
    message: 'At most 30 test deliveries a minute per account; retry after Retry-After',
    whenRedisFails: 'refuse',
  },
} as const;

/** Every /webhooks operation requires `admin`; another tenant's subscription is a 404. */
export function webhookRoutes(deps: Deps): RouteDef[] {
  const store = deps.stores.webhookSubscriptions;
  const found = async (tenantId: string, id: string): Promise<WebhookSubscription> => {
    const subscription = await store.get(tenantId, id);
    if (!subscription) throw notFound('webhook subscription', 'id');
    return subscription;
  };
  const idOf = (params: Record<string, unknown>): string => String(params.id).toLowerCase();
  const testLimits = {
    subscription: new RateLimiter(
      deps.redis,
      deps.config.queuePrefix,
      WEBHOOK_TEST_LIMITS.subscription,
    ),
    tenant: new RateLimiter(deps.redis, deps.config.queuePrefix, WEBHOOK_TEST_LIMITS.tenant),
  };

  return [
    defineRoute({
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      summary: 'Create a webhook subscription; the signing secret is returned only here',
      description:
        '`url` must be an absolute https URL without user-info whose host resolves to public ' +
        'addresses only (checked now and at every delivery). Omitted or empty `events` means ' +
        'every event. Store `signing_secret`: no other response shows it.',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'manage_endpoints', subscriptions: 'none' },
      body: createWebhookBodySchema,
      bodyExample: createWebhookBodyExample,
      headers: [idempotencyKeyHeaderDoc],
      responses: {
        201: {
          description: 'The subscription and its secret',
          schema: createdWebhookSubscriptionSchema,
          example: createdWebhookSubscriptionExample,
          headers: {
            Location: { description: '/api/v1/webhooks/{id}', schema: { type: 'string' } },
            ...idempotentReplayHeaderDoc,
          },
        },
      },
      errors: {
        409:
          'limit_exceeded: the tenant has the maximum number of subscriptions; or ' +
          'idempotency_request_in_progress (Retry-After) while the first request with this key runs',
        422: 'idempotency_key_reused: the key was used with another body',
      },
      handler: async (req, res) => {
        await respondCreateWebhook(deps, req, res, req.valid.body as CreateWebhookBody);
      },
    }),
    defineListRoute({
      path: '/webhooks',
      operationId: 'listWebhooks',
      summary: 'List webhook subscriptions, newest first',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'view', subscriptions: 'filter' },
      description: 'A page of subscriptions',
      itemSchema: webhookSubscriptionSchema,
      itemExample: webhookSubscriptionExample,
      family: 'webhooks',
      cursors: deps.cursors,
      list: (tenantId, page, auth) =>
        store.list(tenantId, page, auth.portal?.subscriptionIds ?? null, auth.livemode),
      render: renderWebhookSubscription,
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/:id',
      operationId: 'getWebhook',
      summary: 'Get a webhook subscription (never its secret)',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'view', subscriptions: 'path' },
      params: webhookIdParamSchema,
      responses: subscriptionAnswer('The subscription'),
      errors: subscriptionNotFoundDoc,
      handler: async (req, res) => {
        const subscription = await found(req.auth.tenantId, idOf(req.valid.params));
        sendVersioned(res, subscription.version, renderWebhookSubscription(subscription));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/webhooks/:id',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook subscription and its secret (also the way to rotate a secret)',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'manage_endpoints', subscriptions: 'path' },
      params: webhookIdParamSchema,
      headers: [ifMatchHeaderDoc],
      responses: { 204: { description: 'Deleted' } },
      errors: { ...subscriptionNotFoundDoc, 412: PRECONDITION_FAILED_DOC },
      handler: async (req, res) => {
        const condition = ifMatchOf(req);
        const deleted = await store.delete(req.auth.tenantId, idOf(req.valid.params), condition);
        if (!deleted) throw notFound('webhook subscription', 'id');
        res.status(204).end();
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/:id/test',
      operationId: 'testWebhook',
      summary: 'Send one signed webhook.test event now (one attempt, no retry)',
      description:
        'Answers 200 whether or not the endpoint accepted it: `delivered`, `status_code` ' +
        '(null when no HTTP response came back) and `error` say what happened. Works on a ' +
        'disabled subscription and never touches its failure counter.',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'manage_endpoints', subscriptions: 'path' },
      params: webhookIdParamSchema,
      responses: {
        200: {
          description: 'What happened, whether or not the destination accepted it',
          schema: webhookTestResultSchema,
          example: webhookTestResultExample,
        },
      },
      errors: {
        ...subscriptionNotFoundDoc,
        429: 'rate_limited: over 10 tests a minute per subscription or 30 per tenant (Retry-After)',
      },
      handler: async (req, res) => {
        const subscription = await found(req.auth.tenantId, idOf(req.valid.params));
        await consumeAll([
          { limiter: testLimits.subscription, key: subscription.id },
          { limiter: testLimits.tenant, key: subscription.tenantId },
        ]);
        res.json(await sendTestDelivery(deps, subscription));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/:id/enable',
      operationId: 'enableWebhook',
      summary: 'Re-enable a subscription and zero its failure counter',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'manage_endpoints', subscriptions: 'path' },
      params: webhookIdParamSchema,
      responses: subscriptionAnswer('The subscription'),
      errors: subscriptionNotFoundDoc,
      handler: async (req, res) => {
        const before = await found(req.auth.tenantId, idOf(req.valid.params));
        const enabled = await deps.stores.subscriptionLifecycle.enable(
          deps.knex,
          req.auth.tenantId,
          before.id,
        );
        if (!enabled) throw notFound('webhook subscription', 'id');
        if (!before.isActive) await wakeSubscription(deps, enabled);
        sendVersioned(res, enabled.version, renderWebhookSubscription(enabled));
      },
    }),
  ];
}
