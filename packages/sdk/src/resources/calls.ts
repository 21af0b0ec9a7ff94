import type { PageIterator } from '../pagination';
import type {
  Call,
  CallDetail,
  CallList,
  ListParams,
  OutboundCallRequest,
  QueuedOutboundCall,
} from '../types';
import { Resource, segment, type IdempotentRequestOptions } from './resource';

/** Options of `startOutbound`: see {@link IdempotentRequestOptions}. */
export type StartOutboundOptions = IdempotentRequestOptions;

/** Call history and outbound calls. */
export class CallsResource extends Resource {
  /**
   * Every call of the account, newest first, following cursors:
   * `for await (const call of client.calls.list({ direction: 'inbound' }))`.
   */
  list(params: ListParams<'listCalls'> = {}): PageIterator<Call> {
    return this.paginate('/calls', params, (page: CallList) => ({
      items: page.calls,
      next: page.next_cursor,
    }));
  }

  /** One call with transcript, recording, booking and cost. */
  get(id: string): Promise<CallDetail> {
    return this.fetchOne(`/calls/${segment(id)}`);
  }

  /** Queues an outbound call (202); the service dials it. Idempotent, see the options. */
  startOutbound(
    body: OutboundCallRequest,
    options: StartOutboundOptions = {},
  ): Promise<QueuedOutboundCall> {
    return this.createIdempotent('/calls/outbound', body, options);
  }
}
