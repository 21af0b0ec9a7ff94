import { listenChannel } from '../listen';

/**
 * The Postgres channel of event streams (docs/decisions/0101-event-streams.md): the statements
 * that write events notify it, with the tenant's id as payload, when that tenant has an open
 * stream (a live row of `event_streams`, migration 106). The notification goes out when, and
 * only if, the transaction commits; Postgres folds repeats within one, so a transaction
 * notifies once per tenant. API processes LISTEN on it, one connection each.
 */
export const EVENT_STREAM_CHANNEL = 'switchboard_events';

/**
 * A CTE `streamed` of a statement that writes events: notifies EVENT_STREAM_CHANNEL once per
 * tenant of the rows of CTE `cte` (with a `tenant_id` column) that somebody streams. Like
 * every CTE that modifies nothing, it runs only if the statement reads it: the statement's
 * final SELECT must (`(SELECT count(*) FROM streamed)`). The probe is one index lookup per
 * tenant of the statement; a tenant nobody streams costs no NOTIFY (a NOTIFY makes the
 * committing transactions that send one take turns at commit).
 */
export const streamedSql = (cte: string): string => `streamed AS (
       SELECT pg_notify('${EVENT_STREAM_CHANNEL}', t.tenant_id)
         FROM (SELECT DISTINCT tenant_id FROM ${cte}) t
        WHERE EXISTS (SELECT 1 FROM event_streams s
                       WHERE s.tenant_id = t.tenant_id AND s.expires_at > now())
     )`;

/**
 * Keeps one LISTEN connection on EVENT_STREAM_CHANNEL (../listen.ts). `onTenant` hears the
 * tenant of every notification; `onUp` is called each time the connection is (again)
 * listening, after which notifications missed while it was down should be made up for by
 * reading; `onLoss` hears the first loss or failure after each time it was up.
 */
export function watchEventStreamNotifications(
  databaseUrl: string,
  handlers: { onTenant(tenantId: string): void; onUp(): void; onLoss(err: unknown): void },
): { close(): Promise<void> } {
  return listenChannel(databaseUrl, EVENT_STREAM_CHANNEL, {
    onNotify: (tenantId) => {
      if (tenantId) handlers.onTenant(tenantId);
    },
    onUp: handlers.onUp,
    onLoss: handlers.onLoss,
  });
}
