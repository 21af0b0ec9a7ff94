import { resumingEventStream, type EventStreamOptions } from '../event-stream';
import type { PageIterator } from '../pagination';
import type { Event, ListParams, QueryOf } from '../types';
import { Resource, segment } from './resource';

/** The filters of a stream: those of the list, without `last_event_id` (see the options). */
export type EventStreamParams = Omit<QueryOf<'streamEvents'>, 'last_event_id'>;

/** Your account's events, operational ones included, as the envelopes webhooks carry (read). */
export class EventsResource extends Resource {
  /**
   * Every event newest first, following cursors; filters `type` (an array: any of them),
   * `created_from`, `created_to`, `receptionist_id`. Events are kept as long as your delivery
   * history (30 days by default).
   */
  list(params: ListParams<'listEvents'> = {}): PageIterator<Event> {
    return this.paginateData<Event>('/events', params);
  }

  /** One event by id (a 404 once it is older than the history kept). */
  get(id: string): Promise<Event> {
    return this.fetchOne(`/events/${segment(id)}`);
  }

  /**
   * Events as they happen, oldest first (`GET /events/stream`, Server-Sent Events), for as
   * long as you iterate: `for await (const e of sb.events.stream({type: ['call.completed']}))`.
   * A dropped connection is resumed after the last event yielded (Last-Event-ID), so none is
   * missed or repeated; `options.lastEventId` starts after an event you kept. `break` or
   * `options.signal` closes the stream.
   */
  stream(params: EventStreamParams = {}, options: EventStreamOptions = {}): AsyncIterable<Event> {
    const http = this.http;
    return {
      [Symbol.asyncIterator]: () => resumingEventStream<Event>(http, params, options),
    };
  }
}
