import { useEffect, useState } from 'preact/hooks';
import type { WebhookRecovery } from './api';
import type { PageProps } from './page-props';
import { plain } from './format';
import { ErrorNote } from './states';

/** Poll cadence and bound: the page stops asking after ten minutes (the log still shows it). */
const POLL_MS = 1_000;
const MAX_POLLS = 600;

/** `datetime-local` value (local wall time, minutes) of an instant. */
const localInput = (d: Date): string =>
  new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

/**
 * Recover since a time (needs `recover`): starts a recovery, then polls its resource until
 * it completes, showing its counts as they move.
 */
export function RecoverPanel(props: PageProps & { endpointId: string; onProgress: () => void }) {
  const { client, onFailure, endpointId } = props;
  const [since, setSince] = useState(localInput(new Date(Date.now() - 3_600_000)));
  const [recovery, setRecovery] = useState<WebhookRecovery | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!recovery || recovery.status === 'completed') return;
    let polls = 0;
    const timer = setInterval(() => {
      if (++polls > MAX_POLLS) return clearInterval(timer);
      client.recovery(endpointId, recovery.id).then(
        (r) => {
          setRecovery(r);
          props.onProgress();
        },
        (err: unknown) => {
          clearInterval(timer);
          if (!onFailure(err)) setError(plain(err));
        },
      );
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [recovery?.id, recovery?.status]);

  const start = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setRecovery(await client.recover(endpointId, new Date(since).toISOString()));
    } catch (err) {
      if (!onFailure(err)) setError(plain(err));
    } finally {
      setBusy(false);
    }
  };
  const running = recovery?.status === 'running';
  return (
    <section aria-labelledby="recover-title">
      <h2 id="recover-title">Recover failed deliveries</h2>
      <p class="muted">
        Sends again, once, every delivery since this time that failed, and every event missed while
        the endpoint was disabled.
      </p>
      <form class="actions" onSubmit={start}>
        <label for="recover-since">Since</label>
        <input
          id="recover-since"
          type="datetime-local"
          required
          value={since}
          onInput={(e) => setSince((e.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy || running}>
          {running ? 'Recovering…' : 'Recover'}
        </button>
      </form>
      <ErrorNote message={error} />
      {recovery && (
        <p role="status" data-testid="recovery" data-status={recovery.status}>
          {recovery.status === 'completed' ? 'Recovery complete' : 'Recovery running'}:{' '}
          {recovery.found} found, {recovery.delivered} delivered, {recovery.failed} failed,{' '}
          {recovery.queued} still queued.
        </p>
      )}
    </section>
  );
}
