import { useState } from 'preact/hooks';
import type { LogFilter, WebhookDelivery } from './api';
import type { PageProps } from './page-props';
import { DeliveryDetail } from './delivery-detail';
import { plain, when } from './format';
import { LogFilterForm } from './log-filter';
import { ErrorNote } from './states';

/** The page of a delivery's event, under the endpoint whose log links to it. */
export const eventHref = (endpointId: string, eventId: string): string =>
  `#/endpoints/${encodeURIComponent(endpointId)}/events/${encodeURIComponent(eventId)}`;

const outcome = (d: WebhookDelivery): string => {
  const a = d.attempts[d.attempts.length - 1];
  if (!a) return '—';
  return a.status_code === null ? `no response (${a.error ?? 'error'})` : `HTTP ${a.status_code}`;
};

/** One delivery: its last outcome, the full detail on demand, and a retry when the session may recover. */
function DeliveryRow(
  props: {
    d: WebhookDelivery;
    endpointId: string;
    onRetried: () => void;
  } & PageProps,
) {
  const { d, client, can, onFailure } = props;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const retry = async () => {
    setBusy(true);
    setError(null);
    try {
      await client.retry(props.endpointId, d.id);
      props.onRetried();
    } catch (err) {
      if (!onFailure(err)) setError(plain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="delivery" data-status={d.status}>
      <details>
        <summary>
          <span
            class={`badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : ''}`}
          >
            {d.status}
          </span>{' '}
          <strong>{d.event_type}</strong> <span class="muted">{when(d.created_at)}</span>
        </summary>
        <p class="muted">
          Delivery {d.id}, event <a href={eventHref(props.endpointId, d.event_id)}>{d.event_id}</a>,
          round {d.round}
        </p>
        <p>
          {d.attempts.length === 0
            ? 'No attempt yet.'
            : `${d.attempts.length} attempt(s); the last: ${outcome(d)}.`}
        </p>
        <DeliveryDetail {...props} deliveryId={d.id} />
        {can.recover && (
          <button type="button" onClick={retry} disabled={busy}>
            {busy ? 'Retrying…' : 'Retry this delivery'}
          </button>
        )}
        <ErrorNote message={error} />
      </details>
    </li>
  );
}

/** The delivery log of one endpoint, newest first, filtered by the API. */
export function DeliveryLog(
  props: PageProps & {
    endpointId: string;
    rows: WebhookDelivery[];
    onReload: () => void;
    onFilter: (f: LogFilter) => void;
  },
) {
  const shown = props.rows;
  return (
    <section aria-labelledby="log-title">
      <div class="row">
        <h2 id="log-title">Delivery log</h2>
        <button type="button" onClick={props.onReload}>
          Refresh
        </button>
      </div>
      <LogFilterForm onApply={props.onFilter} />
      {shown.length === 0 ? (
        <p>No deliveries to show.</p>
      ) : (
        <ul class="log" aria-label="Deliveries">
          {shown.map((d) => (
            <DeliveryRow key={d.id} d={d} onRetried={props.onReload} {...props} />
          ))}
        </ul>
      )}
    </section>
  );
}
