import { useEffect, useState } from 'preact/hooks';
import type { EventEnvelope } from './api';
import type { PageProps } from './page-props';
import { when } from './format';
import { useLoadFailure } from './load-state';
import { Loading, NotFound } from './states';

/**
 * One event (GET /events/{id}), opened from an endpoint's delivery log: the envelope exactly
 * as webhooks carry it. A link reads only the events delivered to the endpoints it sees (the
 * API answers 404 for any other): those get the not-found page.
 */
export function EventPage(props: PageProps & { id: string; endpointId: string }) {
  const { client, onFailure, id, endpointId } = props;
  const [event, setEvent] = useState<EventEnvelope | null>(null);
  const { missing, error, fail } = useLoadFailure(onFailure, [404, 400]);
  useEffect(() => {
    client.event(id).then(setEvent, fail);
  }, [id, client]);

  if (missing) return <NotFound what="Event" />;
  if (!event) return <Loading error={error} />;
  return (
    <section aria-labelledby="event-title" data-testid="event">
      <p>
        <a href={`#/endpoints/${encodeURIComponent(endpointId)}`}>← Back to the endpoint</a>
      </p>
      <h1 id="event-title">
        Event <code>{event.event}</code>
      </h1>
      <dl class="facts">
        <dt>Event id</dt>
        <dd>{event.id}</dd>
        <dt>Created</dt>
        <dd>{when(event.timestamp)}</dd>
      </dl>
      <h2>Envelope</h2>
      <p>What every delivery of this event carries as its body.</p>
      <pre class="code" tabIndex={0}>
        {JSON.stringify(event, null, 2)}
      </pre>
    </section>
  );
}
