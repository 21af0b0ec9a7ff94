import type { FromSchema } from 'json-schema-to-ts';
import {
  newWebhookSubscriptionId,
  webhookSecretContext,
  type WebhookSubscription,
} from '@switchboard/db';
import { generateSigningSecret } from '@switchboard/webhooks';
import type { Deps } from '../deps';
import { notFound } from '../errors';
import { defineRoute, type RouteDef } from '../openapi/route';
import { pageBody, pageRequest } from '../pagination/page';
import { pageQuerySchema, paginated } from '../schemas/common';
import {
  createdWebhookSubscriptionSchema,
  createWebhookBodySchema,
  webhookIdParamSchema,
  webhookSubscriptionSchema,
  webhookTestResultSchema,
} from '../schemas/webhook';
import { checkSubscriptionUrl } from './webhook-url';
import { sendTestDelivery } from './webhook-test-delivery';

type CreateWebhookBody = FromSchema<typeof createWebhookBodySchema>;
type WebhookSubscriptionBody = FromSchema<typeof webhookSubscriptionSchema>;

export const SECRET_WARNING = 'Store this secret now: it is shown only once.';

/** The read shape (CONTRACT.md section 6). It has no place for the secret, by construction. */
export const renderWebhookSubscription = (s: WebhookSubscription): WebhookSubscriptionBody => ({
  id: s.id,
  url: s.url,
  events: s.events,
  description: s.description,
  is_active: s.isActive,
  created_at: s.createdAt.toISOString(),
  updated_at: s.updatedAt.toISOString(),
  disabled_at: s.disabledAt?.toISOString() ?? null,
  disabled_reason: s.disabledReason,
  consecutive_failures: s.consecutiveFailures,
  last_delivery_at: s.lastDeliveryAt?.toISOString() ?? null,
  last_success_at: s.lastSuccessAt?.toISOString() ?? null,
  last_failure_at: s.lastFailureAt?.toISOString() ?? null,
});

const TAG = 'Webhooks';

/** Every /webhooks operation requires `admin`; another tenant's subscription is a 404. */
export function webhookRoutes(deps: Deps): RouteDef[] {
  const store = deps.stores.webhookSubscriptions;
  const found = async (tenantId: string, id: string): Promise<WebhookSubscription> => {
    const subscription = await store.get(tenantId, id);
    if (!subscription) throw notFound('webhook subscription', 'id');
    return subscription;
  };
  const idOf = (params: Record<string, unknown>): string => String(params.id).toLowerCase();

  return [
    defineRoute({
      method: 'post',
      path: '/webhooks',
      summary: 'Create a webhook subscription; the signing secret is returned only here',
      tag: TAG,
      scope: 'admin',
      body: createWebhookBodySchema,
      responses: {
        201: {
          description: 'The subscription and its secret',
          schema: createdWebhookSubscriptionSchema,
        },
      },
      handler: async (req, res) => {
        const body = req.valid.body as CreateWebhookBody;
        const url = await checkSubscriptionUrl(body.url, deps);
        const tenantId = req.auth.tenantId;
        const id = newWebhookSubscriptionId();
        const secret = generateSigningSecret();
        const created = await store.create({
          id,
          tenantId,
          url,
          events: [...new Set(body.events ?? [])],
          description: body.description ?? null,
          secret: {
            ciphertext: deps.secretBox.encrypt(secret, webhookSecretContext(tenantId, id)),
            keyId: deps.secretBox.activeKeyId,
          },
        });
        res.status(201).location(`/api/v1/webhooks/${id}`);
        res.json({
          ...renderWebhookSubscription(created),
          signing_secret: secret,
          _warning: SECRET_WARNING,
        });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks',
      summary: 'List webhook subscriptions, newest first',
      tag: TAG,
      scope: 'admin',
      query: pageQuerySchema,
      responses: {
        200: {
          description: 'A page of subscriptions',
          schema: paginated(webhookSubscriptionSchema),
        },
      },
      handler: async (req, res) => {
        const page = await store.list(
          req.auth.tenantId,
          pageRequest(req, deps.cursors, 'webhooks'),
        );
        res.json(pageBody(req, deps.cursors, 'webhooks', page, renderWebhookSubscription));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/:id',
      summary: 'Get a webhook subscription (never its secret)',
      tag: TAG,
      scope: 'admin',
      params: webhookIdParamSchema,
      responses: { 200: { description: 'The subscription', schema: webhookSubscriptionSchema } },
      handler: async (req, res) => {
        res.json(renderWebhookSubscription(await found(req.auth.tenantId, idOf(req.valid.params))));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/webhooks/:id',
      summary: 'Delete a webhook subscription and its secret (also the way to rotate a secret)',
      tag: TAG,
      scope: 'admin',
      params: webhookIdParamSchema,
      responses: { 204: { description: 'Deleted' } },
      handler: async (req, res) => {
        const deleted = await store.delete(req.auth.tenantId, idOf(req.valid.params));
        if (!deleted) throw notFound('webhook subscription', 'id');
        res.status(204).end();
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/:id/test',
      summary: 'Send one signed webhook.test event now (one attempt, no retry)',
      tag: TAG,
      scope: 'admin',
      params: webhookIdParamSchema,
      responses: {
        200: {
          description: 'What happened, whether or not the destination accepted it',
          schema: webhookTestResultSchema,
        },
      },
      handler: async (req, res) => {
        const subscription = await found(req.auth.tenantId, idOf(req.valid.params));
        res.json(await sendTestDelivery(deps, subscription));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/:id/enable',
      summary: 'Re-enable a subscription and zero its failure counter',
      tag: TAG,
      scope: 'admin',
      params: webhookIdParamSchema,
      responses: { 200: { description: 'The subscription', schema: webhookSubscriptionSchema } },
      handler: async (req, res) => {
        const enabled = await store.enable(req.auth.tenantId, idOf(req.valid.params));
        if (!enabled) throw notFound('webhook subscription', 'id');
        res.json(renderWebhookSubscription(enabled));
      },
    }),
  ];
}
