import { useEffect, useState } from 'preact/hooks';
import type { CreatedWebhookSubscription, WebhookSubscription } from './api';
import type { PageProps } from './page-props';
import { plain, when } from './format';
import { ErrorNote } from './states';

export function StatusBadge({ s }: { s: WebhookSubscription }) {
  if (s.failing) return <span class="badge warn">Failing</span>;
  if (s.is_active) return <span class="badge ok">Active</span>;
  const why = s.disabled_reason === 'consecutive_failures' ? 'Disabled after failures' : 'Paused';
  return <span class="badge bad">{why}</span>;
}

/** Every endpoint with its health at a glance. */
export function EndpointsPage({ client, can, onFailure }: PageProps) {
  const [rows, setRows] = useState<WebhookSubscription[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    client.listEndpoints().then(
      (page) => setRows(page.data),
      (err: unknown) => onFailure(err) || setError(plain(err)),
    );
  }, [client]);
  return (
    <section aria-labelledby="list-title">
      <div class="row">
        <h1 id="list-title">Endpoints</h1>
        {can.manage && (
          <a class="button" href="#/new">
            Add endpoint
          </a>
        )}
      </div>
      <ErrorNote message={error} />
      {rows && rows.length === 0 && <p>No endpoints yet.</p>}
      {rows && rows.length > 0 && (
        <table>
          <caption class="sr-only">Your webhook endpoints and their health</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Status</th>
              <th scope="col">Last success</th>
              <th scope="col">Failures in a row</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={`#/endpoints/${s.id}`}>{s.url}</a>
                  {s.description && <span class="muted block">{s.description}</span>}
                </td>
                <td>
                  <StatusBadge s={s} />
                </td>
                <td>{when(s.last_success_at)}</td>
                <td>{s.consecutive_failures}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The secret, once: it is never shown again. */
export function SecretOnce({ secret, note }: { secret: string; note?: string }) {
  return (
    <div class="secret" role="status">
      <h2>Signing secret</h2>
      <p>Copy it now: it is shown only once. {note}</p>
      <label for="secret">Secret</label>
      <input id="secret" readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
    </div>
  );
}

export function NewEndpointPage({ client, onFailure }: PageProps) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedWebhookSubscription | null>(null);
  if (created) {
    return (
      <section aria-labelledby="created-title">
        <h1 id="created-title">Endpoint added</h1>
        <p>{created.url}</p>
        <SecretOnce secret={created.signing_secret} />
        <p>
          <a class="button" href={`#/endpoints/${created.id}`}>
            Open the endpoint
          </a>
        </p>
      </section>
    );
  }
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const events = String(form.get('events') ?? '')
      .split(/[\s,]+/)
      .filter(Boolean);
    const description = String(form.get('description') ?? '').trim();
    setBusy(true);
    setError(null);
    try {
      setCreated(
        await client.createEndpoint({
          url: String(form.get('url') ?? '').trim(),
          events,
          description: description || null,
        }),
      );
    } catch (err) {
      if (!onFailure(err)) setError(plain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">Add an endpoint</h1>
      <form onSubmit={submit} class="form">
        <label for="url">Endpoint URL (https)</label>
        <input id="url" name="url" type="url" required placeholder="https://example.com/hooks" />
        <label for="events">Events (comma-separated; empty for every event)</label>
        <input id="events" name="events" placeholder="call.completed, sms.received" />
        <label for="description">Description (optional)</label>
        <input id="description" name="description" maxLength={500} />
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Adding…' : 'Add endpoint'}
        </button>
      </form>
    </section>
  );
}
