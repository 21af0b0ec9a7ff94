import type { PageIterator } from '../pagination';
import type { components, ListParams } from '../types';
import { Resource, segment, type EditOptions } from './resource';

/** A campaign with its counters (docs/API.md, Campaigns). */
export type Campaign = components['schemas']['Campaign'];
/** The body of `campaigns.create`: exactly one of the three recipient forms. */
export type CampaignCreateRequest = components['schemas']['CampaignCreateRequest'];
/** One recipient of a campaign and its outcome. */
export type CampaignRecipient = components['schemas']['CampaignRecipient'];

export interface CreateCampaignOptions {
  /**
   * Makes retries safe: the same key and body never create a second campaign. Generated (a
   * random UUID) when omitted, and reused by this call's own retries; pass your own to stay
   * safe across process restarts too.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** SMS campaigns: a message to a list of leads or numbers, sent at a steady rate. */
export class CampaignsResource extends Resource {
  /**
   * Accepts a campaign (202, `status: "queued"`): its recipients are resolved now, so
   * `recipients` is final. Idempotent, see the options.
   */
  create(body: CampaignCreateRequest, options: CreateCampaignOptions = {}): Promise<Campaign> {
    return this.createIdempotent('/campaigns', body, options);
  }

  /** Every campaign of the account, newest first, following cursors. */
  list(params: ListParams<'listCampaigns'> = {}): PageIterator<Campaign> {
    return this.paginateData<Campaign>('/campaigns', params);
  }

  /** One campaign with its counters as they are now. */
  get(id: string): Promise<Campaign> {
    return this.fetchOne(`/campaigns/${segment(id)}`);
  }

  /**
   * The campaign's recipients with the outcome of each (`delivered`, `undelivered`, `failed`,
   * ...), last in sending order first, following cursors; `outcome` filter.
   */
  listRecipients(
    id: string,
    params: ListParams<'listCampaignRecipients'> = {},
  ): PageIterator<CampaignRecipient> {
    return this.paginateData<CampaignRecipient>(`/campaigns/${segment(id)}/recipients`, params);
  }

  /**
   * Stops a queued or running campaign: nothing more is sent and nothing is emitted. A
   * campaign already completed or canceled is a 409 `invalid_state`. Repeating it after a
   * lost answer can only meet that 409 (or, with `ifMatch`, a 412), so it is retried like
   * any idempotent request. With `ifMatch`, only the version it names is canceled (see
   * {@link EditOptions}).
   */
  cancel(id: string, options: EditOptions = {}): Promise<Campaign> {
    return this.invoke('POST', `/campaigns/${segment(id)}/cancel`, {
      idempotent: true,
      ifMatch: options.ifMatch,
    });
  }
}
