import { useEffect, useState } from 'preact/hooks';
import type { EventTypeInfo } from './api';
import type { PageProps } from './page-props';
import { plain } from './format';
import { ErrorNote } from './states';

/** The event catalog (GET /event-types): every event with its description, schema and example. */
export function CatalogPage({ client, onFailure }: PageProps) {
  const [types, setTypes] = useState<EventTypeInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    client.eventTypes().then(
      (list) => setTypes(list.data),
      (err: unknown) => onFailure(err) || setError(plain(err)),
    );
  }, [client]);
  return (
    <section aria-labelledby="catalog-title">
      <h1 id="catalog-title">Event catalog</h1>
      <p>Every event your endpoints can subscribe to, with the shape of its data.</p>
      <ErrorNote message={error} />
      {!types && !error && <p aria-busy="true">Loading…</p>}
      {types && (
        <ul class="log" aria-label="Event types">
          {types.map((t) => (
            <li key={t.name} class="delivery" data-event={t.name}>
              <h2 class="event-name">{t.name}</h2>
              <p>{t.description}</p>
              <details>
                <summary>Schema of data</summary>
                <pre class="code" tabIndex={0}>
                  {JSON.stringify(t.schema, null, 2)}
                </pre>
              </details>
              <details>
                <summary>Example</summary>
                <pre class="code" tabIndex={0}>
                  {JSON.stringify(t.example, null, 2)}
                </pre>
              </details>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
