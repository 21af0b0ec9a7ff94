import type { Deps } from '../../deps';
import { notFound } from '../../errors';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { subscriptionNotFoundDoc, webhookIdParamSchema } from '../../shared/schemas';
import { webhookStatsExample, webhookStatsSchema } from './schemas';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Delivery health of a subscription over the last 24 hours, for the portal's charts. */
export function webhookStatsRoutes(deps: Deps): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/webhooks/:id/stats',
      operationId: 'getWebhookStats',
      summary: 'Delivery health of a subscription over the last 24 hours, per minute',
      description:
        'Deliveries that ended each minute (succeeded / failed) and the p50 / p99 duration ' +
        'of the attempts made that minute, aggregated by the server; minutes without ' +
        'activity are left out.',
      tag: 'Webhooks',
      scope: 'admin',
      portal: { capability: 'view', subscriptions: 'path' },
      params: webhookIdParamSchema,
      responses: {
        200: {
          description: 'Per-minute counts and latency',
          schema: webhookStatsSchema,
          example: webhookStatsExample,
        },
      },
      errors: subscriptionNotFoundDoc,
      handler: async (req, res) => {
        const id = String(req.valid.params.id).toLowerCase();
        const subscription = await deps.stores.webhookSubscriptions.get(req.auth.tenantId, id);
        if (!subscription) throw notFound('webhook subscription', 'id');
        const until = new Date();
        const since = new Date(until.getTime() - DAY_MS);
        const stats = await deps.stores.webhookStats.forSubscription(id, since);
        res.json({
          subscription_id: id,
          since: since.toISOString(),
          until: until.toISOString(),
          bucket_seconds: 60,
          totals: {
            succeeded: stats.succeeded,
            failed: stats.failed,
            p50_ms: stats.p50Ms,
            p99_ms: stats.p99Ms,
          },
          buckets: stats.minutes.map((m) => ({
            start: m.start.toISOString(),
            succeeded: m.succeeded,
            failed: m.failed,
            p50_ms: m.p50Ms,
            p99_ms: m.p99Ms,
          })),
        });
      },
    }),
  ];
}
