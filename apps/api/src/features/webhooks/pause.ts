import type {
  VersionCondition,
  WebhookSubscription,
  WebhookSubscriptionPatch,
} from '@switchboard/db';
import { emit } from '@switchboard/events';
import type { Deps } from '../../deps';

/**
 * Applies a PATCH and, when it pauses an active subscription, emits `webhook.disabled`
 * (reason `manual`, nothing cancelled: its deliveries wait) in the same transaction: the
 * event exists if and only if the pause commits. The row is locked first, so of two
 * concurrent pauses only the one that found it active reports it. Fan-out never delivers the
 * event to the subscription it is about (docs/API.md, Webhooks). A version `condition` is
 * checked by the update itself (VersionMismatch, nothing changed, nothing emitted).
 */
export async function updateAndReport(
  deps: Deps,
  tenantId: string,
  id: string,
  patch: WebhookSubscriptionPatch,
  condition: VersionCondition = null,
): Promise<WebhookSubscription | undefined> {
  const subscriptions = deps.stores.subscriptionLifecycle;
  if (patch.isActive !== false) {
    return subscriptions.update(deps.knex, tenantId, id, patch, condition);
  }
  return deps.knex.transaction(async (trx) => {
    const wasActive = await subscriptions.lockActive(trx, tenantId, id);
    if (wasActive === undefined) return undefined;
    const updated = await subscriptions.update(trx, tenantId, id, patch, condition);
    if (updated && wasActive && updated.disabledAt) {
      await emit(trx, {
        tenantId,
        livemode: updated.livemode,
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
