import { eventCatalog, eventEnvelopeSchema } from '../../openapi/webhooks';
import { cursorSchema, dateBound, EVENT_NAME_PATTERN, limitSchema } from '../../shared/schemas';

/** At most this many `type` values in one request. */
export const MAX_TYPE_FILTERS = 20;

/** The filters of the event log and of event streams (docs/API.md, Events). */
export const eventFilterProperties = {
  type: {
    type: 'array',
    maxItems: MAX_TYPE_FILTERS,
    items: {
      type: 'string',
      pattern: EVENT_NAME_PATTERN,
      'x-error-message': 'type must be an event name such as call.completed',
    },
    description:
      'Only events of these types; repeat the parameter for several (`?type=call.completed&type=call.missed`)',
    'x-error-message': `type must be up to ${MAX_TYPE_FILTERS} event names such as call.completed`,
  },
  created_from: { ...dateBound, description: 'Inclusive; a bare date means from 00:00 UTC' },
  created_to: { ...dateBound, description: 'Inclusive; a bare date means the whole UTC day' },
  receptionist_id: {
    type: 'string',
    pattern: '^rcp_[A-Za-z0-9]{1,64}$',
    description: "Only this receptionist's events",
  },
} as const;

/** Query of GET /events: a page and the filters. */
export const eventListQuerySchema = {
  type: 'object',
  properties: { limit: limitSchema, cursor: cursorSchema, ...eventFilterProperties },
} as const;

/** The shape of an event id (`evt_…`); anything else is a 400. */
export const EVENT_ID_PATTERN = '^evt_[A-Za-z0-9]{1,64}$';

/** Path of GET /events/{id}. */
export const eventParamSchema = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: 'string', pattern: EVENT_ID_PATTERN, description: 'Event id (evt_…)' },
  },
} as const;

/** Query of GET /events/stream: the filters, and where to resume. */
export const eventStreamQuerySchema = {
  type: 'object',
  properties: {
    ...eventFilterProperties,
    last_event_id: {
      type: 'string',
      pattern: EVENT_ID_PATTERN,
      description:
        'Resume after this event, for clients that cannot send the Last-Event-ID header (the header wins)',
    },
  },
} as const;

/** An item of the event log: the envelope a webhook carries (a union over event types). */
export const eventSchema = eventEnvelopeSchema();

/** A call.completed envelope, as documented for its webhook. */
export const eventExample: object =
  eventCatalog().find((e) => e.name === 'call.completed')?.example ?? {};

/** The start of a stream: the reconnection delay, one event, a heartbeat. */
export const eventStreamExample =
  'retry: 2000\n\n' +
  `id: ${(eventExample as { id?: string }).id ?? 'evt_…'}\nevent: call.completed\n` +
  `data: ${JSON.stringify(eventExample)}\n\n` +
  ': ping\n\n';
