import type { FromSchema } from 'json-schema-to-ts';
import type { OpenDelivery, WebhookRecovery } from '@switchboard/db';
import { enqueue } from '@switchboard/queues';
import type { Deps } from '../../deps';
import { conflict, invalidParameter, notFound } from '../../errors';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { nullableTimestamp, subscriptionNotFoundDoc, timestamp } from '../../shared/schemas';
import { webhookIdParamSchema } from '../../shared/schemas';

const TAG = 'Webhooks';
const DAY_MS = 86_400_000;
/** Deliveries enqueued by the request itself; the reconciler sends any beyond. */
const ENQUEUE_BATCH = 1_000;

const recoverBodySchema = {
  title: 'WebhookRecoveryRequest',
  type: 'object',
  required: ['since'],
  additionalProperties: false,
  properties: {
    since: { ...timestamp, description: 'Deliveries and events created at or after this time' },
    until: { ...timestamp, description: 'Created before this time; defaults to now' },
  },
} as const;

const recoverySchema = {
  title: 'WebhookRecovery',
  type: 'object',
  required: [
    'id',
    'subscription_id',
    'since',
    'until',
    'status',
    'found',
    'queued',
    'delivered',
    'failed',
    'created_at',
    'completed_at',
  ],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^rec_' },
    subscription_id: { type: 'string', format: 'uuid' },
    since: timestamp,
    until: timestamp,
    status: { enum: ['running', 'completed'] },
    found: {
      type: 'integer',
      minimum: 0,
      description: 'Deliveries resent or sent for the first time',
    },
    queued: { type: 'integer', minimum: 0, description: 'Of them, still to be delivered' },
    delivered: { type: 'integer', minimum: 0 },
    failed: { type: 'integer', minimum: 0, description: 'Failed again (or cancelled)' },
    created_at: timestamp,
    completed_at: nullableTimestamp,
  },
} as const;

const recoveryExample: FromSchema<typeof recoverySchema> = {
  id: 'rec_4b1f0c2d9e8a4f7b8c6d5e4f3a2b1c0d',
  subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
  since: '2026-11-21T08:00:00.000Z',
  until: '2026-11-21T12:00:00.000Z',
  status: 'running',
  found: 42,
  queued: 42,
  delivered: 0,
  failed: 0,
  created_at: '2026-11-21T12:00:00.000Z',
  completed_at: null,
};

const recoveryParamSchema = {
  type: 'object',
  required: ['id', 'recovery_id'],
  properties: {
    id: webhookIdParamSchema.properties.id,
    recovery_id: { type: 'string', pattern: '^rec_[A-Za-z0-9]{1,64}$', description: 'rec_…' },
  },
} as const;

const render = (r: WebhookRecovery): FromSchema<typeof recoverySchema> => ({
  id: r.id,
  subscription_id: r.subscriptionId,
  since: r.since.toISOString(),
  until: r.until.toISOString(),
  status: r.status,
  found: r.found,
  queued: r.queued,
  delivered: r.delivered,
  failed: r.failed,
  created_at: r.createdAt.toISOString(),
  completed_at: r.completedAt?.toISOString() ?? null,
});

/** POST /webhooks/{id}/recover and GET /webhooks/{id}/recoveries/{recovery_id} (admin). */
export function webhookRecoverRoutes(deps: Deps): RouteDef[] {
  const { webhookSubscriptions, webhookRecoveries } = deps.stores;

  const enqueueAll = async (deliveries: OpenDelivery[]): Promise<void> => {
    try {
      await enqueue(
        deps.queues,
        'deliveries',
        deliveries.slice(0, ENQUEUE_BATCH).map((d) => ({
          data: {
            v: 1 as const,
            deliveryId: d.id,
            round: d.round,
            attempt: d.attempts + 1,
            tenantId: d.tenantId,
            targetId: d.subscriptionId ?? '',
          },
        })),
      );
    } catch (err) {
      // Committed: the reconciler finds the due rows and adds their jobs.
      deps.logger.warn({ err }, 'recovery committed but not enqueued; the reconciler will');
    }
  };

  return [
    defineRoute({
      method: 'post',
      path: '/webhooks/:id/recover',
      operationId: 'recoverWebhook',
      summary: 'Send again what failed in a window, and what was missed while disabled',
      description:
        'Resends once, with a fresh attempt budget and the same event id, every delivery of ' +
        'the subscription created in `[since, until)` that failed or was cancelled, and sends ' +
        'every event of the window that matched it but got no delivery while it was disabled.',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'recover', subscriptions: 'path' },
      params: webhookIdParamSchema,
      body: recoverBodySchema,
      bodyExample: { since: '2026-11-21T08:00:00Z' },
      responses: {
        202: {
          description: 'The recovery, running',
          schema: recoverySchema,
          example: recoveryExample,
          headers: {
            Location: {
              description: '/api/v1/webhooks/{id}/recoveries/{recovery_id}',
              schema: { type: 'string' },
            },
          },
        },
      },
      errors: {
        ...subscriptionNotFoundDoc,
        409: 'subscription_disabled (enable it first), or recovery_in_progress',
      },
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const id = String(req.valid.params.id).toLowerCase();
        const body = req.valid.body as FromSchema<typeof recoverBodySchema>;
        const subscription = await webhookSubscriptions.get(tenantId, id);
        if (!subscription) throw notFound('webhook subscription', 'id');
        const since = new Date(body.since);
        const until = body.until === undefined ? new Date() : new Date(body.until);
        const oldest = new Date(Date.now() - deps.config.deliveryRetentionDays * DAY_MS);
        if (since < oldest) {
          throw invalidParameter(
            'since',
            `since must not be before ${oldest.toISOString()}: older delivery records are not kept`,
          );
        }
        if (until <= since) throw invalidParameter('until', 'until must be after since');
        if (!subscription.isActive) {
          throw conflict(
            'subscription_disabled',
            'This subscription is disabled; enable it first (PATCH /api/v1/webhooks/{id})',
          );
        }
        const result = await webhookRecoveries.start({
          tenantId,
          subscriptionId: id,
          since,
          until,
        });
        if (result.kind === 'in_progress') {
          throw conflict(
            'recovery_in_progress',
            'A recovery of this subscription is running; wait for it to complete',
          );
        }
        await enqueueAll(result.deliveries);
        res
          .status(202)
          .location(`/api/v1/webhooks/${id}/recoveries/${result.recovery.id}`)
          .json(render(result.recovery));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/:id/recoveries/:recovery_id',
      operationId: 'getWebhookRecovery',
      summary: 'A recovery: status and counts',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'recover', subscriptions: 'path' },
      params: recoveryParamSchema,
      responses: {
        200: { description: 'The recovery', schema: recoverySchema, example: recoveryExample },
      },
      errors: { 404: 'resource_not_found: no such subscription or recovery in this tenant' },
      handler: async (req, res) => {
        const recovery = await webhookRecoveries.get(
          req.auth.tenantId,
          String(req.valid.params.id).toLowerCase(),
          String(req.valid.params.recovery_id),
        );
        if (!recovery) throw notFound('recovery', 'recovery_id');
        res.json(render(recovery));
      },
    }),
  ];
}
