import {
  WebhookSubscriptionsStore,
  type WebhookSubscription,
  type WebhookSubscriptionPatch,
} from '@switchboard/db';
import { emit } from '@switchboard/events';
import type { Deps } from '../../deps';

/**
 * Applies a PATCH and, when it pauses an active subscription, emits `webhook.disabled`
 * (reason `manual`, nothing cancelled: its deliveries wait) in the same transaction: the
 * event exists if and only if the pause commits. The row is locked first, so of two
 * concurrent pauses only the one that found it active reports it. Fan-out never delivers the
 * event to the subscription it is about (docs/API.md, Webhooks).
 */
export async function updateAndReport(
  deps: Deps,
  tenantId: string,
  id: string,
  patch: WebhookSubscriptionPatch,
): Promise<WebhookSubscription | undefined> {
  if (patch.isActive !== false) return deps.stores.webhookSubscriptions.update(tenantId, id, patch);
  return deps.knex.transaction(async (trx) => {
    const was = (await trx('webhook_subscriptions')
      .where({ tenant_id: tenantId, id })
      .forNoKeyUpdate()
      .first('is_active')) as { is_active: boolean } | undefined;
    if (!was) return undefined;
    const updated = await new WebhookSubscriptionsStore(trx).update(tenantId, id, patch);
    if (updated && was.is_active && updated.disabledAt) {
      await emit(trx, {
        tenantId,
        type: 'webhook.disabled',
        data: {
          subscription_id: updated.id,
          url: updated.url,
          reason: 'manual',
          disabled_at: updated.disabledAt.toISOString(),
          pending_cancelled: 0,
        },
      });
    }
    return updated;
  });
}
