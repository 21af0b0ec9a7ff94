import { useState } from 'preact/hooks';
import type { WebhookRotatedSecret } from './api';
import type { PageProps } from './page-props';
import { SecretOnce } from './endpoints';
import { plain, when } from './format';
import { ErrorNote } from './states';

const OVERLAPS: Array<[number, string]> = [
  [86_400, '24 hours'],
  [3_600, '1 hour'],
  [604_800, '7 days'],
  [0, 'none: stop the old secret now'],
];

/**
 * Rotates the signing secret (needs `manage_secrets`). The new secret is held in this
 * component's state only and is gone once the page is left: it is shown once.
 */
export function RotateSecret(props: PageProps & { endpointId: string; onRotated: () => void }) {
  const { client, onFailure } = props;
  const [overlap, setOverlap] = useState(86_400);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [rotated, setRotated] = useState<WebhookRotatedSecret | null>(null);
  const rotate = async () => {
    setBusy(true);
    setError(null);
    try {
      setRotated(await client.rotateSecret(props.endpointId, overlap));
      props.onRotated();
    } catch (err) {
      if (!onFailure(err)) setError(plain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="rotate-title">
      <h2 id="rotate-title">Secret rotation</h2>
      {rotated ? (
        <>
          <SecretOnce
            secret={rotated.signing_secret}
            note={
              rotated.previous_secret_expires_at
                ? `The previous secret keeps signing until ${when(rotated.previous_secret_expires_at)}.`
                : 'The previous secret no longer signs.'
            }
          />
          <button type="button" onClick={() => setRotated(null)}>
            I have copied it
          </button>
        </>
      ) : (
        <div class="actions">
          <label for="overlap">Keep the old secret signing for</label>
          <select
            id="overlap"
            value={String(overlap)}
            onChange={(e) => setOverlap(Number((e.currentTarget as HTMLSelectElement).value))}
          >
            {OVERLAPS.map(([s, label]) => (
              <option key={s} value={String(s)}>
                {label}
              </option>
            ))}
          </select>
          <button type="button" onClick={rotate} disabled={busy}>
            {busy ? 'Rotating…' : 'Rotate secret'}
          </button>
        </div>
      )}
      <ErrorNote message={error} />
    </section>
  );
}

/**
 * In place of RotateSecret on a link without `manage_secrets`: says why rotation is not here
 * and how to get it, rather than leaving it out without a word. No control: nothing to press.
 */
export function RotateUnavailable() {
  return (
    <section aria-labelledby="rotate-title" class="unavailable" data-testid="rotate-unavailable">
      <h2 id="rotate-title">Secret rotation</h2>
      <p class="muted">
        Not available with this link: it does not include the <code>manage_secrets</code>{' '}
        capability. Ask whoever sent you the link for one that allows rotating signing secrets.
      </p>
    </section>
  );
}
