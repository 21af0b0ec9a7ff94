import type { FromSchema } from 'json-schema-to-ts';
import type { WebhookSubscription } from '@switchboard/db';
import type { webhookSubscriptionSchema } from './schemas';

type WebhookSubscriptionBody = FromSchema<typeof webhookSubscriptionSchema>;

export const SECRET_WARNING = 'Store this secret now: it is shown only once.';

/** The read shape (docs/API.md, Webhooks). It has no place for the secret, by construction. */
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
  failing: s.failing,
  last_delivery_at: s.lastDeliveryAt?.toISOString() ?? null,
  last_success_at: s.lastSuccessAt?.toISOString() ?? null,
  last_failure_at: s.lastFailureAt?.toISOString() ?? null,
  rate_limit_per_second: s.rateLimitPerSecond,
  // An overlap that has ended is reported as none.
  secret_overlap_ends_at:
    s.secretOverlapEndsAt && s.secretOverlapEndsAt.getTime() > Date.now()
      ? s.secretOverlapEndsAt.toISOString()
      : null,
  livemode: s.livemode,
});
