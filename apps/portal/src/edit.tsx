import { useState } from 'preact/hooks';
import { ApiFailure, etagOf, type EndpointChange, type WebhookSubscription } from './api';
import type { PageProps } from './page-props';
import { plain } from './format';
import { ErrorNote } from './states';

const listOf = (text: string): string[] =>
  text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);

/** Said when the endpoint changed elsewhere (another tab, a colleague) since it was shown. */
export const CHANGED_ELSEWHERE =
  'This endpoint was changed elsewhere since this page showed it. It now shows the current ' +
  'settings: check them and make your change again.';

/**
 * Pause / resume and the edit form of one endpoint (PATCH /webhooks/{id}). A paused
 * endpoint keeps its deliveries waiting; they go out on resume (docs/API.md, Webhooks).
 * Every change names the version shown (If-Match), so it never overwrites a change the
 * page has not shown: that is a 412, and the page shows the current endpoint instead.
 */
export function EditEndpoint(
  props: PageProps & {
    endpoint: WebhookSubscription;
    onChanged: (s: WebhookSubscription) => void;
  },
) {
  const { client, onFailure, endpoint } = props;
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const change = async (body: EndpointChange, done?: () => void) => {
    setBusy(true);
    setError(null);
    try {
      props.onChanged(await client.updateEndpoint(endpoint.id, body, etagOf(endpoint)));
      done?.();
    } catch (err) {
      if (err instanceof ApiFailure && err.code === 'precondition_failed') {
        setError(CHANGED_ELSEWHERE);
        // The form closes: opened again, it holds the current settings.
        setEditing(false);
        await client.getEndpoint(endpoint.id).then(props.onChanged, () => undefined);
      } else if (!onFailure(err)) setError(plain(err));
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const description = String(form.get('description') ?? '').trim();
    void change(
      {
        url: String(form.get('url') ?? '').trim(),
        events: listOf(String(form.get('events') ?? '')),
        description: description || null,
      },
      () => setEditing(false),
    );
  };

  return (
    <div class="block">
      <div class="actions">
        {endpoint.is_active ? (
          <button type="button" disabled={busy} onClick={() => change({ is_active: false })}>
            Pause deliveries
          </button>
        ) : (
          <button type="button" disabled={busy} onClick={() => change({ is_active: true })}>
            Resume deliveries
          </button>
        )}
        <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          {editing ? 'Cancel editing' : 'Edit endpoint'}
        </button>
      </div>
      {!endpoint.is_active && endpoint.disabled_reason === 'manual' && (
        <p class="muted">Paused: new events wait and are sent when you resume.</p>
      )}
      <ErrorNote message={error} />
      {editing && (
        <form onSubmit={submit} class="form" aria-label="Edit endpoint">
          <label for="edit-url">Endpoint URL (https)</label>
          <input id="edit-url" name="url" type="url" required defaultValue={endpoint.url} />
          <label for="edit-events">Events (comma-separated; empty for every event)</label>
          <input id="edit-events" name="events" defaultValue={endpoint.events.join(', ')} />
          <label for="edit-description">Description (optional)</label>
          <input
            id="edit-description"
            name="description"
            maxLength={500}
            defaultValue={endpoint.description ?? ''}
          />
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save changes'}
          </button>
        </form>
      )}
    </div>
  );
}
