import { Client } from 'pg';

/**
 * The Postgres channel that says an API key may have changed as authentication reads it: a
 * key was revoked (payload: its id) or a tenant's rate limit was set (payload: the tenant's
 * id). The notification is sent by the changing transaction itself, so it goes out when (and
 * only if) the change commits. API processes LISTEN on it to drop their cached keys at once
 * (ApiKeysStore, ACTIVE_KEY_TTL_MS).
 */
export const API_KEY_CHANGES_CHANNEL = 'switchboard_api_key_changes';

/** SQL that notifies the channel with the id bound to `?`. */
export const NOTIFY_API_KEY_CHANGE_SQL = `pg_notify('${API_KEY_CHANGES_CHANNEL}', ?)`;

/** What the watcher drives: ApiKeysStore's cache switch and its drop. */
export interface ApiKeyChangeTarget {
  watchingChanges: boolean;
  forgetActiveKeys(): void;
}

const RETRY_MS = 1_000;

/**
 * Keeps one LISTEN connection on API_KEY_CHANGES_CHANNEL, reconnecting every second after any
 * loss: `target` caches active keys only while it is up, and drops them on every
 * notification. `onLoss` hears the first loss or failure after each time it was up (to log
 * it once, not once a second while Postgres is away).
 */
export function watchApiKeyChanges(
  databaseUrl: string,
  target: ApiKeyChangeTarget,
  onLoss: (err: unknown) => void,
): { close(): Promise<void> } {
  let stopped = false;
  let current: Client | null = null;
  let timer: NodeJS.Timeout | undefined;
  let told = false;
  const connect = (): void => {
    if (stopped) return;
    const client = new Client({ connectionString: databaseUrl, keepAlive: true });
    current = client;
    let lost = false;
    const retry = (err: unknown) => {
      if (lost) return;
      lost = true;
      target.watchingChanges = false;
      client.end().catch(() => undefined);
      if (stopped) return;
      if (!told) onLoss(err);
      told = true;
      timer = setTimeout(connect, RETRY_MS);
      timer.unref();
    };
    client.on('notification', () => target.forgetActiveKeys());
    client.on('error', retry);
    client.on('end', () => retry(new Error('LISTEN connection ended')));
    client
      .connect()
      .then(() => client.query(`LISTEN ${API_KEY_CHANGES_CHANNEL}`))
      .then(() => {
        if (lost || stopped) return;
        target.watchingChanges = true;
        told = false;
      })
      .catch(retry);
  };
  connect();
  return {
    async close() {
      stopped = true;
      clearTimeout(timer);
      target.watchingChanges = false;
      await current?.end().catch(() => undefined);
    },
  };
}
