import { fromDataPage, type DataPage, type PageIterator } from '../pagination';
import type {
  CreatedWebhookSubscription,
  ListParams,
  WebhookDelivery,
  WebhookSubscription,
  WebhookSubscriptionCreate,
  WebhookStats,
  WebhookTestResult,
} from '../types';
import { Resource, segment } from './resource';

/** Webhook subscriptions, their delivery log and retries (admin scope). */
export class WebhooksResource extends Resource {
  /** The answer is the only one that carries `signing_secret`: store it. Not retried. */
  create(body: WebhookSubscriptionCreate): Promise<CreatedWebhookSubscription> {
    return this.http.request({ method: 'POST', path: '/webhooks', body, idempotent: false });
  }

  list(params: ListParams<'listWebhooks'> = {}): PageIterator<WebhookSubscription> {
    return this.paginate('/webhooks', params, (page: DataPage<WebhookSubscription>) =>
      fromDataPage(page),
    );
  }

  get(id: string): Promise<WebhookSubscription> {
    return this.http.request({ method: 'GET', path: `/webhooks/${segment(id)}`, idempotent: true });
  }

  delete(id: string): Promise<void> {
    return this.http.request({
      method: 'DELETE',
      path: `/webhooks/${segment(id)}`,
      idempotent: true,
    });
  }

  /** Sends one signed `webhook.test` now and reports what the endpoint answered. */
  test(id: string): Promise<WebhookTestResult> {
    return this.http.request({
      method: 'POST',
      path: `/webhooks/${segment(id)}/test`,
      idempotent: false,
    });
  }

  /** Re-enables a subscription and zeroes its failure counter. */
  enable(id: string): Promise<WebhookSubscription> {
    return this.http.request({
      method: 'POST',
      path: `/webhooks/${segment(id)}/enable`,
      idempotent: true,
    });
  }

  /** The subscription's deliveries with every attempt, newest first. */
  listDeliveries(
    id: string,
    params: ListParams<'listWebhookDeliveries'> = {},
  ): PageIterator<WebhookDelivery> {
    return this.paginate(
      `/webhooks/${segment(id)}/deliveries`,
      params,
      (page: DataPage<WebhookDelivery>) => fromDataPage(page),
    );
  }

  /** Sends one delivery again (a new round of attempts). Not retried by the client. */
  retryDelivery(id: string, deliveryId: string): Promise<WebhookDelivery> {
    return this.http.request({
      method: 'POST',
      path: `/webhooks/${segment(id)}/deliveries/${segment(deliveryId)}/retry`,
      idempotent: false,
    });
  }

  /** Delivery health over the last 24 hours, per minute (counts and p50/p99 latency). */
  stats(id: string): Promise<WebhookStats> {
    return this.http.request({
      method: 'GET',
      path: `/webhooks/${segment(id)}/stats`,
      idempotent: true,
    });
  }
}
