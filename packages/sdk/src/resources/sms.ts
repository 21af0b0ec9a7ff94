import type { PageIterator } from '../pagination';
import type { ListParams, Sms, SmsOptOut, SmsSendRequest } from '../types';
import { Resource, segment, type IdempotentRequestOptions } from './resource';

/**
 * Text messages: send (now or scheduled) from a receptionist's number, cancel a scheduled
 * one, read one, a receptionist's history, the opt-out list.
 */
export class SmsResource extends Resource {
  /**
   * Queues a text from a `ready` receptionist (202, `status: "queued"`, or `"scheduled"` with
   * `send_at`); the service sends it (`sent` with `sms.sent`, then `delivered` or
   * `undelivered` by the carrier's receipt) or records why not (`failed`, `error_code`,
   * `sms.failed`). A recipient who
   * replied STOP is a 422 `recipient_opted_out` and nothing is stored. Idempotent: a key is
   * generated when none is given and reused on this call's retries, so a retry never texts
   * the customer twice.
   */
  send(body: SmsSendRequest, options: IdempotentRequestOptions = {}): Promise<Sms> {
    return this.createIdempotent('/sms/send', body, options);
  }

  /** Cancels a scheduled message (a 409 `not_cancellable` once it is anything else). */
  cancel(id: string): Promise<void> {
    return this.invoke('DELETE', `/sms/${segment(id)}`, { idempotent: true });
  }

  /** The numbers that opted out of your SMS, newest first, following cursors; `phone` filter. */
  listOptOuts(params: ListParams<'listSmsOptOuts'> = {}): PageIterator<SmsOptOut> {
    return this.paginateData<SmsOptOut>('/sms/opt-outs', params);
  }

  /** One message, inbound or outbound. */
  get(id: string): Promise<Sms> {
    return this.fetchOne(`/sms/${segment(id)}`);
  }

  /**
   * One receptionist's messages, both directions, newest first, following cursors; filters
   * `direction`, `date_from`, `date_to` as for calls.
   */
  listForReceptionist(
    receptionistId: string,
    params: ListParams<'listReceptionistSms'> = {},
  ): PageIterator<Sms> {
    return this.paginateData<Sms>(`/receptionists/${segment(receptionistId)}/sms`, params);
  }
}
