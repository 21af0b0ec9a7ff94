import { useState } from 'preact/hooks';
import type { WebhookDeliveryDetail } from './api';
import type { PageProps } from './page-props';
import { plain, when } from './format';
import { ErrorNote } from './states';

const Headers = ({ title, h }: { title: string; h: Record<string, string> | null }) =>
  h ? (
    <>
      <h4>{title}</h4>
      <pre tabIndex={0}>{Object.entries(h).map(([k, v]) => `${k}: ${v}\n`)}</pre>
    </>
  ) : null;

/**
 * A delivery in full, loaded on demand (GET /webhooks/{id}/deliveries/{delivery_id}): the
 * payload exactly as signed and every attempt's request and response headers.
 */
export function DeliveryDetail(props: PageProps & { endpointId: string; deliveryId: string }) {
  const { client, onFailure } = props;
  const [detail, setDetail] = useState<WebhookDeliveryDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = async () => {
    setBusy(true);
    setError(null);
    try {
      setDetail(await client.delivery(props.endpointId, props.deliveryId));
    } catch (err) {
      if (!onFailure(err)) setError(plain(err));
    } finally {
      setBusy(false);
    }
  };
  if (!detail) {
    return (
      <>
        <button type="button" onClick={load} disabled={busy}>
          {busy ? 'Loading…' : 'Show payload and headers'}
        </button>
        <ErrorNote message={error} />
      </>
    );
  }
  return (
    <div class="detail" data-testid="delivery-detail">
      <h3>Payload</h3>
      <pre tabIndex={0}>{JSON.stringify(detail.payload, null, 2)}</pre>
      <h3>Attempts</h3>
      {detail.attempts.length === 0 && <p>No attempt yet.</p>}
      <ol class="attempts">
        {detail.attempts.map((a) => (
          <li key={`${a.round}-${a.attempt}`}>
            Attempt {a.attempt} (round {a.round}) at {when(a.attempted_at)}:{' '}
            {a.status_code === null
              ? `no response (${a.error ?? 'error'})`
              : `HTTP ${a.status_code}`}
            , {a.duration_ms} ms
            <Headers title="Request headers" h={a.request_headers} />
            <Headers title="Response headers" h={a.response_headers} />
            {a.response_excerpt && (
              <>
                <h4>Response body</h4>
                <pre tabIndex={0}>{a.response_excerpt}</pre>
              </>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}
