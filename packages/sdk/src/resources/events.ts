import type { PageIterator } from '../pagination';
import type { Event, ListParams } from '../types';
import { Resource, segment } from './resource';

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
}
