import type { Request, Response } from 'express';
import type { FromSchema } from 'json-schema-to-ts';
import {
  newWebhookSubscriptionId,
  webhookSecretContext,
  type WebhookSubscription,
} from '@switchboard/db';
import { generateSigningSecret } from '@switchboard/webhooks';
import type { Deps } from '../../deps';
import { conflict, notFound } from '../../errors';
import {
  fingerprintRequest,
  parseIdempotencyKey,
  replayOrReject,
  type IdempotencyScope,
  type IdempotentResponse,
} from '../../idempotency';
import { checkSubscriptionUrl } from '../../shared/webhook-url';
import { renderWebhookSubscription, SECRET_WARNING } from './render';
import type { createWebhookBodySchema } from './schemas';

type CreateWebhookBody = FromSchema<typeof createWebhookBodySchema>;

const created = (s: WebhookSubscription, replayed: boolean): IdempotentResponse => ({
  status: 201,
  // Never the secret: this body may be kept in Redis for replays (see respondCreateWebhook).
  body: renderWebhookSubscription(s),
  location: `/api/v1/webhooks/${s.id}`,
  replayed,
});

async function createWebhook(
  deps: Deps,
  tenantId: string,
  body: CreateWebhookBody,
  idempotency: IdempotencyScope | null,
  livemode: boolean,
): Promise<IdempotentResponse & { secret?: string }> {
  const url = await checkSubscriptionUrl(body.url, deps);
  const id = newWebhookSubscriptionId();
  const secret = generateSigningSecret();
  const max = deps.config.webhook.maxSubscriptionsPerTenant;
  const result = await deps.stores.webhookSubscriptions.createWithinLimit(
    {
      id,
      tenantId,
      url,
      events: [...new Set(body.events ?? [])],
      description: body.description ?? null,
      rateLimitPerSecond: body.rate_limit_per_second ?? null,
      secret: {
        ciphertext: deps.secretBox.encrypt(secret, webhookSecretContext(tenantId, id)),
        keyId: deps.secretBox.activeKeyId,
      },
      idempotency,
      livemode,
    },
    max,
  );
  if (result.kind === 'limit_exceeded') {
    throw conflict(
      'limit_exceeded',
      `This account already has the maximum of ${max} webhook subscriptions; delete one first`,
    );
  }
  if (result.kind === 'existing') {
    replayOrReject(result.fingerprint, idempotency);
    return created(result.subscription, true);
  }
  return { ...created(result.subscription, false), secret };
}

/**
 * POST /webhooks with Idempotency-Key (docs/API.md, Webhooks). The Redis protocol of
 * `Idempotency.run` decides between running, replaying, 409 and 422, and the unique
 * (tenant_id, idempotency_key) index is the backstop. Invariant: the secret is never part of
 * what Redis keeps; a replay reads it back from the encrypted column and decrypts it.
 */
export async function respondCreateWebhook(
  deps: Deps,
  req: Request,
  res: Response,
  body: CreateWebhookBody,
): Promise<void> {
  const tenantId = req.auth.tenantId;
  const key = parseIdempotencyKey(req.headers['idempotency-key'], req.auth.livemode);
  let fresh: string | undefined;
  let result: IdempotentResponse;
  if (key === null) {
    const made = await createWebhook(deps, tenantId, body, null, req.auth.livemode);
    fresh = made.secret;
    result = made;
  } else {
    const fingerprint = fingerprintRequest('POST /webhooks', body);
    result = await deps.idempotency.run(tenantId, key, fingerprint, async () => {
      const { secret, ...rest } = await createWebhook(
        deps,
        tenantId,
        body,
        { key, fingerprint },
        req.auth.livemode,
      );
      fresh = secret;
      return rest;
    });
  }
  const rendered = result.body as ReturnType<typeof renderWebhookSubscription>;
  const secret = fresh ?? (await readSecret(deps, tenantId, rendered.id));
  if (result.location) res.setHeader('Location', result.location);
  if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.status(201).json({ ...rendered, signing_secret: secret, _warning: SECRET_WARNING });
}

/** The current secret of a subscription, decrypted; a 404 if it was deleted since. */
async function readSecret(deps: Deps, tenantId: string, id: string): Promise<string> {
  const sealed = await deps.stores.webhookSubscriptions.getSecretCiphertext(tenantId, id);
  if (!sealed) throw notFound('webhook subscription', 'id');
  return deps.secretBox.decrypt(sealed.ciphertext, webhookSecretContext(tenantId, id));
}
