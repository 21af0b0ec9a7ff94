import type { PageIterator } from '../pagination';
import type {
  CreatedWebhookSubscription,
  EventTypeList,
  ListParams,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookRecovery,
  WebhookRecoveryRequest,
  WebhookRotatedSecret,
  WebhookSecretRotation,
  WebhookSubscription,
  WebhookSubscriptionCreate,
  WebhookSubscriptionPatch,
  WebhookStats,
  WebhookTestResult,
} from '../types';
import { Resource, segment, type EditOptions, type IdempotentRequestOptions } from './resource';

/** Webhook subscriptions, their delivery log and retries (admin scope). */
export class WebhooksResource extends Resource {
  /**
   * The answer carries `signing_secret`: store it. Idempotent (an Idempotency-Key is sent
   * and reused by retries); a replay answers the same subscription and secret.
   */
  create(
    body: WebhookSubscriptionCreate,
    options: IdempotentRequestOptions = {},
  ): Promise<CreatedWebhookSubscription> {
    return this.createIdempotent('/webhooks', body, options);
  }

  /**
   * Changes url, events, description, `is_active` (pause/resume) or the rate limit; with
   * `ifMatch`, only if the subscription is still at that version (see {@link EditOptions}).
   */
  update(
    id: string,
    body: WebhookSubscriptionPatch,
    options: EditOptions = {},
  ): Promise<WebhookSubscription> {
    return this.invoke('PATCH', `/webhooks/${segment(id)}`, {
      body,
      idempotent: true,
      ifMatch: options.ifMatch,
    });
  }

  /** Pauses: deliveries wait (not cancelled) and go out on resume. */
  pause(id: string, options: EditOptions = {}): Promise<WebhookSubscription> {
    return this.update(id, { is_active: false }, options);
  }

  /** Resumes (or enables) and zeroes the failure counter. */
  resume(id: string, options: EditOptions = {}): Promise<WebhookSubscription> {
    return this.update(id, { is_active: true }, options);
  }

  /**
   * A new secret, shown only in this answer; the previous one keeps signing for
   * `overlap_seconds` (default 24 h). Not retried: a retry would rotate again.
   */
  rotateSecret(id: string, body: WebhookSecretRotation = {}): Promise<WebhookRotatedSecret> {
    return this.invoke('POST', `/webhooks/${segment(id)}/rotate-secret`, {
      body,
      idempotent: false,
    });
  }

  /** One delivery in full: the payload as signed, every attempt with its headers. */
  getDelivery(id: string, deliveryId: string): Promise<WebhookDeliveryDetail> {
    return this.fetchOne(`/webhooks/${segment(id)}/deliveries/${segment(deliveryId)}`);
  }

  /** Every subscription's deliveries, filtered (status, event, since, until, subscription_id). */
  listAllDeliveries(
    params: ListParams<'listTenantWebhookDeliveries'> = {},
  ): PageIterator<WebhookDelivery> {
    return this.paginateData<WebhookDelivery>('/webhook-deliveries', params);
  }

  /**
   * Sends again what failed in `[since, until)` and what was missed while disabled (202).
   * Not retried: a second request while one runs is a 409.
   */
  recover(id: string, body: WebhookRecoveryRequest): Promise<WebhookRecovery> {
    return this.invoke('POST', `/webhooks/${segment(id)}/recover`, { body, idempotent: false });
  }

  getRecovery(id: string, recoveryId: string): Promise<WebhookRecovery> {
    return this.fetchOne(`/webhooks/${segment(id)}/recoveries/${segment(recoveryId)}`);
  }

  /** The event catalog: every event's description, `data` schema and an example. */
  eventTypes(): Promise<EventTypeList> {
    return this.fetchOne('/event-types');
  }

  list(params: ListParams<'listWebhooks'> = {}): PageIterator<WebhookSubscription> {
    return this.paginateData<WebhookSubscription>('/webhooks', params);
  }

  get(id: string): Promise<WebhookSubscription> {
    return this.fetchOne(`/webhooks/${segment(id)}`);
  }

  /** Deletes it; with `ifMatch`, only if it is still at that version. */
  delete(id: string, options: EditOptions = {}): Promise<void> {
    return this.invoke('DELETE', `/webhooks/${segment(id)}`, {
      idempotent: true,
      ifMatch: options.ifMatch,
    });
  }

  /** Sends one signed `webhook.test` now and reports what the endpoint answered. */
  test(id: string): Promise<WebhookTestResult> {
    return this.invoke('POST', `/webhooks/${segment(id)}/test`, { idempotent: false });
  }

  /** Re-enables a subscription and zeroes its failure counter. */
  enable(id: string): Promise<WebhookSubscription> {
    return this.invoke('POST', `/webhooks/${segment(id)}/enable`, { idempotent: true });
  }

  /** The subscription's deliveries with every attempt, newest first (filters as documented). */
  listDeliveries(
    id: string,
    params: ListParams<'listWebhookDeliveries'> = {},
  ): PageIterator<WebhookDelivery> {
    return this.paginateData<WebhookDelivery>(`/webhooks/${segment(id)}/deliveries`, params);
  }

  /** Sends one delivery again (a new round of attempts). Not retried by the client. */
  retryDelivery(id: string, deliveryId: string): Promise<WebhookDelivery> {
    const path = `/webhooks/${segment(id)}/deliveries/${segment(deliveryId)}/retry`;
    return this.invoke('POST', path, { idempotent: false });
  }

  /** Delivery health over the last 24 hours, per minute (counts and p50/p99 latency). */
  stats(id: string): Promise<WebhookStats> {
    return this.fetchOne(`/webhooks/${segment(id)}/stats`);
  }
}
