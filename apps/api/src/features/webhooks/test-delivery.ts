import { newId, webhookSecretContext, type WebhookSubscription } from '@switchboard/db';
import { buildTestEnvelope, type TestEnvelope } from '@switchboard/events';
import {
  SERVICE_SIGNATURE_HEADER,
  SERVICE_TIMESTAMP_HEADER,
  signPayload,
  type SendErrorCode,
} from '@switchboard/webhooks';
import type { Deps } from '../../deps';
import { notFound } from '../../errors';

/** The result of POST /webhooks/{id}/test (docs/API.md, Webhooks). */
export interface WebhookTestResult {
  subscription_id: string;
  event_id: string;
  delivered: boolean;
  status_code: number | null;
  error: SendErrorCode | null;
  signature_header: typeof SERVICE_SIGNATURE_HEADER;
  timestamp_header: typeof SERVICE_TIMESTAMP_HEADER;
  payload: TestEnvelope;
}

/**
 * Sends one synthetic `webhook.test` event through the real signing path and the SSRF-safe
 * sender. Exactly one attempt, never retried, never queued, and the subscription row is not
 * touched (no counters, no timestamps), so it works the same on a disabled subscription.
 * The decrypted secret lives only in this call's scope: it is never logged or returned.
 */
export async function sendTestDelivery(
  deps: Pick<Deps, 'secretBox' | 'webhookSender' | 'logger' | 'stores'>,
  subscription: WebhookSubscription,
): Promise<WebhookTestResult> {
  const { tenantId, id } = subscription;
  const sealed = await deps.stores.webhookSubscriptions.getSecretCiphertext(tenantId, id);
  if (!sealed) throw notFound('webhook subscription', 'id'); // deleted meanwhile
  const secret = deps.secretBox.decrypt(sealed.ciphertext, webhookSecretContext(tenantId, id));
  const eventId = newId('evt');
  const payload = buildTestEnvelope(eventId, id, new Date(), subscription.livemode);
  const body = JSON.stringify(payload);
  const headers = signPayload({ secret, eventId, body });
  const result = await deps.webhookSender.send({ url: subscription.url, body, headers });
  deps.logger.info(
    {
      subscriptionId: id,
      eventId,
      delivered: result.delivered,
      statusCode: result.status_code,
      error: result.error,
      durationMs: result.duration_ms,
    },
    'webhook test delivery',
  );
  return {
    subscription_id: id,
    event_id: eventId,
    delivered: result.delivered,
    status_code: result.status_code,
    error: result.error,
    signature_header: SERVICE_SIGNATURE_HEADER,
    timestamp_header: SERVICE_TIMESTAMP_HEADER,
    payload,
  };
}
