import type { Request } from 'express';
import { timeOfId, type EventLogFilter, type KeysetPosition } from '@switchboard/db';
import type { Deps } from '../../deps';
import { invalidParameter, notFound, serviceUnavailable } from '../../errors';
import { rateLimited } from '../../http/rate-limit';
import { defineRoute, type RouteDef } from '../../openapi/route';
import { eventFilter, eventRetention, expiredEvent, ownReceptionistFilter } from './filters';
import type { EventRetention } from './filters';
import { EVENT_ID_PATTERN, eventStreamExample, eventStreamQuerySchema } from './schemas';
import { SseWriter } from './sse';

/** The reconnection delay clients are told. */
const RETRY_MS = 2_000;
/** Seconds a client refused for its key's open streams is told to wait. */
const LIMIT_RETRY_AFTER_SEC = 5;

const lastEventIdOf = (req: Request): { id: string; param: string } | null => {
  const header = req.headers['last-event-id'];
  if (typeof header === 'string' && header !== '') {
    if (!new RegExp(EVENT_ID_PATTERN).test(header)) {
      throw invalidParameter('Last-Event-ID', 'Last-Event-ID must be an event id (evt_…)');
    }
    return { id: header, param: 'Last-Event-ID' };
  }
  const query = req.valid.query.last_event_id;
  return typeof query === 'string' ? { id: query, param: 'last_event_id' } : null;
};

/**
 * Where a stream starts: right after the event the client last got (the header wins over the
 * query: EventSource sends the header when it reconnects), else at `created_from`, else at
 * the moment it connects (the events of the settle window before it included).
 */
async function startOf(
  deps: Deps,
  req: Request,
  filter: EventLogFilter,
  retention: EventRetention,
): Promise<KeysetPosition> {
  const last = lastEventIdOf(req);
  if (last) {
    const event = await deps.stores.eventLog.get(
      req.auth.tenantId,
      last.id,
      retention.since,
      req.auth.livemode,
    );
    if (event) return { t: event.createdAt.getTime(), id: event.id };
    const at = timeOfId(last.id);
    throw at && at < retention.since
      ? expiredEvent(last.id, last.param, retention)
      : notFound('event', last.param);
  }
  if (filter.from) return { t: filter.from.getTime(), id: '' };
  const now = await deps.stores.eventLog.now();
  return { t: now.getTime() - deps.config.eventStreams.settleMs, id: '' };
}

/**
 * Whether a stream from `position` has nothing left to send: `created_to` has passed (by the
 * settle window) and no event of the window follows the position. Answered 204, which tells
 * EventSource to stop reconnecting.
 */
async function windowDone(
  deps: Deps,
  tenantId: string,
  filter: EventLogFilter,
  retention: EventRetention,
  position: KeysetPosition,
): Promise<boolean> {
  if (!filter.toExclusive) return false;
  const { eventLog } = deps.stores;
  const now = await eventLog.now();
  if (now.getTime() - deps.config.eventStreams.settleMs < filter.toExclusive.getTime()) {
    return false;
  }
  const next = await eventLog.after(tenantId, filter, retention.since, position, 1);
  return next.events.length === 0;
}

/** GET /events/stream (read): the tenant's events as Server-Sent Events, live. */
export function eventStreamRoute(deps: Deps, tag: string): RouteDef {
  const settings = deps.config.eventStreams;
  return defineRoute({
    method: 'get',
    path: '/events/stream',
    operationId: 'streamEvents',
    summary: "The tenant's events as they happen (Server-Sent Events)",
    description:
      'A `text/event-stream` of the events of `GET /events`, oldest first, each as `id:` ' +
      '(the event id), `event:` (its type) and `data:` (the envelope as JSON), with a ' +
      '`: ping` comment every 15 s. The same filters. `Last-Event-ID` (the header ' +
      'EventSource sends when it reconnects, or `last_event_id`) resumes right after that ' +
      'event, with nothing missed or repeated; without it the stream starts now, or at ' +
      '`created_from`. An event is sent about a second after it happened. At most 5 ' +
      'streams per API key at once.',
    tag,
    scope: 'read',
    query: eventStreamQuerySchema,
    headers: [
      {
        name: 'Last-Event-ID',
        description: 'Resume after this event (set by EventSource when it reconnects)',
        schema: { type: 'string', pattern: EVENT_ID_PATTERN },
      },
    ],
    responses: {
      204: {
        description:
          'Nothing left to send: `created_to` has passed and every event before it was sent ' +
          '(EventSource stops reconnecting)',
      },
      200: {
        description: 'The stream; it stays open until the client closes it',
        contentType: 'text/event-stream',
        schema: { type: 'string' },
        example: eventStreamExample,
      },
    },
    errors: {
      404:
        'resource_not_found: no such receptionist (receptionist_id) in this tenant, or no such ' +
        "event (Last-Event-ID) in this tenant's history",
      429: 'rate_limited: this API key has as many event streams open as it may',
    },
    handler: async (req, res) => {
      // A HEAD gets the stream's headers, not a stream that would never send a byte.
      if (req.method === 'HEAD') {
        res.status(200).type('text/event-stream').end();
        return;
      }
      if (deps.lifecycle.isStopping || deps.eventStreams.isStopped) {
        throw serviceUnavailable('This API process is stopping; reconnect');
      }
      const { tenantId, keyId } = req.auth;
      const filter = eventFilter(req.valid.query, req.auth.livemode);
      await ownReceptionistFilter(deps, tenantId, filter);
      const retention = await eventRetention(deps, tenantId);
      const position = await startOf(deps, req, filter, retention);
      if (await windowDone(deps, tenantId, filter, retention, position)) {
        res.status(204).end();
        return;
      }
      const lease = await deps.eventStreams.admit(tenantId, keyId);
      if (lease.kind === 'limit') {
        throw rateLimited(
          `This API key has ${lease.open} event streams open, the most it may; close one ` +
            `(or retry after ${LIMIT_RETRY_AFTER_SEC} s)`,
          LIMIT_RETRY_AFTER_SEC,
        );
      }
      const sse = new SseWriter(res, {
        heartbeatMs: settings.heartbeatMs,
        maxBufferBytes: settings.maxBufferBytes,
        retryMs: RETRY_MS,
      });
      const scope = { tenantId, filter, since: retention.since };
      await deps.eventStreams.serve({ leaseId: lease.id, keyId, scope, position }, sse);
    },
  });
}
