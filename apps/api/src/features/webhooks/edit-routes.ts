import type { FromSchema } from 'json-schema-to-ts';
import { webhookSecretContext, type WebhookSubscription } from '@switchboard/db';
import { updateAndReport } from './pause';
import { enqueue } from '@switchboard/queues';
import { generateSigningSecret } from '@switchboard/webhooks';
import type { Deps } from '../../deps';
import { notFound } from '../../errors';
import {
  ifMatchHeaderDoc,
  ifMatchOf,
  preconditionFailed,
  PRECONDITION_FAILED_DOC,
  sendVersioned,
} from '../../http/if-match';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { subscriptionNotFoundDoc, webhookIdParamSchema } from '../../shared/schemas';
import { checkSubscriptionUrl } from '../../shared/webhook-url';
import { renderWebhookSubscription, SECRET_WARNING } from './render';
import {
  patchWebhookBodyExample,
  patchWebhookBodySchema,
  rotatedSecretExample,
  rotatedSecretSchema,
  rotateSecretBodySchema,
  subscriptionAnswer,
} from './schemas';

type PatchBody = FromSchema<typeof patchWebhookBodySchema>;
type RotateBody = FromSchema<typeof rotateSecretBodySchema>;

const TAG = 'Webhooks';
const DEFAULT_OVERLAP_SECONDS = 86_400;
/** Deliveries enqueued by a resume itself; the reconciler picks up any beyond. */
const WAKE_BATCH = 1_000;

/**
 * Makes the deliveries that waited while a subscription was paused due now and adds their
 * jobs. Not fatal: the rows are the truth and the reconciler adds whatever this could not.
 */
export async function wakeSubscription(deps: Deps, s: WebhookSubscription): Promise<void> {
  try {
    const due = await deps.stores.deliveryLifecycle.wake(deps.knex, s.id, WAKE_BATCH);
    await enqueue(
      deps.queues,
      'deliveries',
      due.map((d) => ({
        data: {
          v: 1 as const,
          deliveryId: d.id,
          round: d.round,
          attempt: d.attempts + 1,
          ...(d.claims > 0 ? { claims: d.claims } : {}),
          tenantId: d.tenantId,
          targetId: s.id,
        },
      })),
    );
  } catch (err) {
    deps.logger.warn({ err, subscriptionId: s.id }, 'resumed; the reconciler will send the rest');
  }
}

/** PATCH /webhooks/{id} and POST /webhooks/{id}/rotate-secret (admin). */
export function webhookEditRoutes(deps: Deps): RouteDef[] {
  const store = deps.stores.webhookSubscriptions;
  const idOf = (params: Record<string, unknown>): string => String(params.id).toLowerCase();

  return [
    defineRoute({
      method: 'patch',
      path: '/webhooks/:id',
      operationId: 'updateWebhook',
      summary: 'Change a subscription: url, events, description, pause/resume, rate limit',
      description:
        '`url` gets every check of creation. `is_active: false` pauses (disabled_reason ' +
        '`manual`): events keep creating deliveries, which wait and go out on resume. ' +
        '`is_active: true` resumes (or enables an auto-disabled subscription) and zeroes the ' +
        'failure counter. A new url applies to every attempt made after the change. With ' +
        'If-Match, the change applies only to the version it names (docs/API.md, ' +
        'Conditional edits).',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'manage_endpoints', subscriptions: 'path' },
      params: webhookIdParamSchema,
      headers: [ifMatchHeaderDoc],
      body: patchWebhookBodySchema,
      bodyExample: patchWebhookBodyExample,
      responses: subscriptionAnswer('The subscription as changed'),
      errors: { ...subscriptionNotFoundDoc, 412: PRECONDITION_FAILED_DOC },
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const id = idOf(req.valid.params);
        const body = req.valid.body as PatchBody;
        const condition = ifMatchOf(req);
        // 404 before the URL check: another tenant's id learns nothing about URLs. A version
        // already gone is a 412 before it too; the update checks the version again, itself.
        const before = await store.get(tenantId, id);
        if (!before) throw notFound('webhook subscription', 'id');
        if (condition && !condition.includes(before.version)) {
          throw preconditionFailed(before.version);
        }
        const url = body.url === undefined ? undefined : await checkSubscriptionUrl(body.url, deps);
        const updated = await updateAndReport(
          deps,
          tenantId,
          id,
          {
            url,
            events: body.events && [...new Set(body.events)],
            description: body.description,
            isActive: body.is_active,
            rateLimitPerSecond: body.rate_limit_per_second,
          },
          condition,
        );
        if (!updated) throw notFound('webhook subscription', 'id');
        if (body.is_active === true && !before.isActive) await wakeSubscription(deps, updated);
        sendVersioned(res, updated.version, renderWebhookSubscription(updated));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/:id/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Replace the signing secret; the previous one keeps signing during an overlap',
      description:
        'During the overlap (`overlap_seconds`, 0 to 604800, default 86400) every delivery ' +
        'carries two signatures, newest first. Rotating during an overlap drops the older ' +
        'secret at once: never more than two.',
      tag: TAG,
      scope: 'admin',
      portal: { capability: 'manage_secrets', subscriptions: 'path' },
      params: webhookIdParamSchema,
      body: rotateSecretBodySchema,
      bodyExample: { overlap_seconds: 86400 },
      responses: {
        200: {
          description: 'The new secret, shown only here',
          schema: rotatedSecretSchema,
          example: rotatedSecretExample,
        },
      },
      errors: subscriptionNotFoundDoc,
      handler: async (req, res) => {
        const tenantId = req.auth.tenantId;
        const id = idOf(req.valid.params);
        const body = (req.valid.body ?? {}) as RotateBody;
        const overlap = body.overlap_seconds ?? DEFAULT_OVERLAP_SECONDS;
        const secret = generateSigningSecret();
        const endsAt = overlap > 0 ? new Date(Date.now() + overlap * 1000) : null;
        const rotated = await store.rotateSecret(
          tenantId,
          id,
          {
            ciphertext: deps.secretBox.encrypt(secret, webhookSecretContext(tenantId, id)),
            keyId: deps.secretBox.activeKeyId,
          },
          endsAt,
        );
        if (!rotated) throw notFound('webhook subscription', 'id');
        res.json({
          id: rotated.id,
          signing_secret: secret,
          previous_secret_expires_at: rotated.secretOverlapEndsAt?.toISOString() ?? null,
          _warning: SECRET_WARNING,
        });
      },
    }),
  ];
}
