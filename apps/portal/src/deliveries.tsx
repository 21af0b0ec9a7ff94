import { useState } from 'preact/hooks';
import type { WebhookDelivery } from './api';
import type { PageProps } from './app';
import { plain, when } from './format';
import { ErrorNote } from './states';

type Filter = 'all' | 'pending' | 'delivering' | 'succeeded' | 'failed' | 'cancelled';

/** One delivery: every attempt's outcome, and a retry when the session may recover. */
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
          Delivery {d.id}, event {d.event_id}, round {d.round}
        </p>
        {d.attempts.length === 0 && <p>No attempt yet.</p>}
        <ol class="attempts">
          {d.attempts.map((a) => (
            <li key={`${a.round}-${a.attempt}`}>
              Attempt {a.attempt} (round {a.round}) at {when(a.attempted_at)}:{' '}
              {a.status_code === null
                ? `no response (${a.error ?? 'error'})`
                : `HTTP ${a.status_code}`}
              , {a.duration_ms} ms
              {a.response_excerpt && <pre>{a.response_excerpt}</pre>}
            </li>
          ))}
        </ol>
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

/** The delivery log of one endpoint, newest first, filtered on the page shown. */
export function DeliveryLog(
  props: PageProps & {
    endpointId: string;
    rows: WebhookDelivery[];
    onReload: () => void;
  },
) {
  const [filter, setFilter] = useState<Filter>('all');
  const shown = props.rows.filter((d) => filter === 'all' || d.status === filter);
  return (
    <section aria-labelledby="log-title">
      <div class="row">
        <h2 id="log-title">Delivery log</h2>
        <button type="button" onClick={props.onReload}>
          Refresh
        </button>
      </div>
      <label for="status-filter">Show</label>{' '}
      <select
        id="status-filter"
        value={filter}
        onChange={(e) => setFilter((e.currentTarget as HTMLSelectElement).value as Filter)}
      >
        <option value="all">all deliveries</option>
        <option value="succeeded">succeeded</option>
        <option value="failed">failed</option>
        <option value="pending">pending</option>
        <option value="cancelled">cancelled</option>
      </select>
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
