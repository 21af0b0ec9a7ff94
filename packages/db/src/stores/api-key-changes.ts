import { listenChannel } from '../listen';

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

/**
 * Keeps one LISTEN connection on API_KEY_CHANGES_CHANNEL (../listen.ts): `target` caches
 * active keys only while it is up, and drops them on every notification. `onLoss` hears the
 * first loss or failure after each time it was up.
 */
export function watchApiKeyChanges(
  databaseUrl: string,
  target: ApiKeyChangeTarget,
  onLoss: (err: unknown) => void,
): { close(): Promise<void> } {
  return listenChannel(databaseUrl, API_KEY_CHANGES_CHANNEL, {
    onNotify: () => target.forgetActiveKeys(),
    onUp: () => (target.watchingChanges = true),
    onDown: () => (target.watchingChanges = false),
    onLoss,
  });
}
