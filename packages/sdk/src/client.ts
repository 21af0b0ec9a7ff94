import { Transport } from './http';
import { CallsResource } from './resources/calls';
import { CampaignsResource } from './resources/campaigns';
import { EventsResource } from './resources/events';
import { LeadsResource } from './resources/leads';
import { ReceptionistsResource } from './resources/receptionists';
import { SmsResource } from './resources/sms';
import { UsageResource } from './resources/usage';
import { TestDataResource } from './resources/test-data';
import { WebhooksResource } from './resources/webhooks';
import { PortalResource } from './resources/portal';
import { DEFAULT_RETRY, type RetryOptions } from './retry';

export interface SwitchboardOptions {
  /** An API key, `sk_live_…`. */
  apiKey: string;
  /**
   * Where the API is: `https://switchboard.example.com` (the `/api/v1` prefix is added) or a
   * URL that already ends in `/api/v1` or `/v1`.
   */
  baseUrl: string;
  /** Retries of failed requests; see {@link RetryOptions}. `{ maxRetries: 0 }` turns them off. */
  retry?: RetryOptions;
  /** Deadline of one try, milliseconds. Default 30000. */
  timeoutMs?: number;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
}

/** `https://x` → `https://x/api/v1`; a URL that names a version already is kept. */
export function apiBaseUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return /\/(api\/)?v1$/.test(trimmed) ? trimmed : `${trimmed}/api/v1`;
}

/**
 * The Switchboard API client.
 *
 * ```ts
 * const client = new Switchboard({ apiKey: process.env.SWITCHBOARD_KEY!, baseUrl });
 * for await (const call of client.calls.list({ direction: 'inbound' })) console.log(call.id);
 * ```
 */
export class Switchboard {
  readonly calls: CallsResource;
  readonly receptionists: ReceptionistsResource;
  readonly usage: UsageResource;
  readonly sms: SmsResource;
  readonly leads: LeadsResource;
  readonly webhooks: WebhooksResource;
  readonly campaigns: CampaignsResource;
  readonly portal: PortalResource;
  readonly events: EventsResource;
  readonly testData: TestDataResource;

  constructor(options: SwitchboardOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    const http = new Transport({
      apiKey: options.apiKey,
      baseUrl: apiBaseUrl(options.baseUrl),
      retry: { ...DEFAULT_RETRY, ...options.retry },
      timeoutMs: options.timeoutMs ?? 30_000,
      fetch: options.fetch ?? globalThis.fetch,
    });
    this.calls = new CallsResource(http);
    this.receptionists = new ReceptionistsResource(http);
    this.usage = new UsageResource(http);
    this.sms = new SmsResource(http);
    this.leads = new LeadsResource(http);
    this.webhooks = new WebhooksResource(http);
    this.campaigns = new CampaignsResource(http);
    this.portal = new PortalResource(http);
    this.events = new EventsResource(http);
    this.testData = new TestDataResource(http);
  }
}
