import { webhookSecretContext, type ClaimedDelivery, type Delivery } from '@switchboard/db';
import { generateSigningSecret } from '@switchboard/webhooks';
import type { WorkerDeps } from '../deps';
import { openSecret } from './opened-secrets';

/**
 * Where a delivery goes and the secret(s) it is signed with; null = cancel the delivery;
 * `paused` = the subscription is paused by its tenant: the delivery waits, unattempted.
 */
export interface DeliveryTarget {
  url: string;
  secret: string;
  /** The secret before a rotation, while its overlap lasts. */
  previousSecret: string | null;
}

const receptionistSecretContext = (tenantId: string, receptionistId: string) =>
  `receptionists/${tenantId}/${receptionistId}/webhook`;

/**
 * Resolves the target at send time: a subscription that was disabled or deleted, or a
 * receptionist whose webhook_url was cleared, gets nothing more. The legacy secret is
 * generated on first use and stored encrypted; it is never returned by any endpoint.
 */
export async function resolveTarget(
  deps: WorkerDeps,
  d: Delivery,
  subscription: ClaimedDelivery['subscription'],
): Promise<DeliveryTarget | 'paused' | null> {
  const { stores, secretBox, knex } = deps;
  if (d.subscriptionId) {
    // Read by the claim itself, in the same statement: the state at send time.
    if (subscription?.paused) return 'paused';
    if (!subscription || !subscription.isActive) return null;
    const context = webhookSecretContext(subscription.tenantId, d.subscriptionId);
    return {
      url: subscription.url,
      secret: openSecret(secretBox, subscription.ciphertext, context),
      previousSecret: subscription.previousCiphertext
        ? openSecret(secretBox, subscription.previousCiphertext, context)
        : null,
    };
  }
  if (!d.receptionistId) return null;
  const r = await stores.receptionists.getWebhookTarget(knex, d.receptionistId);
  if (!r?.url) return null;
  const context = receptionistSecretContext(r.tenantId, d.receptionistId);
  let sealed = r.secretCiphertext;
  if (!sealed) {
    const fresh = secretBox.encrypt(generateSigningSecret(), context);
    const receptionistId = d.receptionistId;
    sealed = await knex.transaction((trx) =>
      stores.receptionists.ensureWebhookSecret(trx, receptionistId, fresh),
    );
  }
  return { url: r.url, secret: secretBox.decrypt(sealed, context), previousSecret: null };
}
