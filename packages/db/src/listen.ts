import { Client } from 'pg';

const RETRY_MS = 1_000;

/** What a LISTEN connection tells its owner. */
export interface ListenHandlers {
  /** A notification on the channel, with its payload ('' when none). */
  onNotify(payload: string): void;
  /**
   * The connection is listening (again). Notifications sent while it was down are lost:
   * an owner that must not miss one reads what changed meanwhile.
   */
  onUp(): void;
  /** The connection is down (after onUp, or a failed attempt); it is retried every second. */
  onDown?(): void;
  /** The first loss or failure after each time it was up: to log once, not once a second. */
  onLoss(err: unknown): void;
}

/**
 * Keeps one LISTEN connection on `channel`, reconnecting every RETRY_MS after any loss, until
 * closed. NOTIFY is sent by the committing transaction, so a notification means the change
 * it names is visible.
 */
export function listenChannel(
  databaseUrl: string,
  channel: string,
  handlers: ListenHandlers,
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
      handlers.onDown?.();
      client.end().catch(() => undefined);
      if (stopped) return;
      if (!told) handlers.onLoss(err);
      told = true;
      timer = setTimeout(connect, RETRY_MS);
      timer.unref();
    };
    client.on('notification', (n) => {
      if (n.channel === channel) handlers.onNotify(n.payload ?? '');
    });
    client.on('error', retry);
    client.on('end', () => retry(new Error('LISTEN connection ended')));
    client
      .connect()
      .then(() => client.query(`LISTEN ${channel}`))
      .then(() => {
        if (lost || stopped) return;
        told = false;
        handlers.onUp();
      })
      .catch(retry);
  };
  connect();
  return {
    async close() {
      stopped = true;
      clearTimeout(timer);
      handlers.onDown?.();
      await current?.end().catch(() => undefined);
    },
  };
}
