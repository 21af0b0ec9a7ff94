import { Client } from 'pg';
import { EVENT_STREAM_CHANNEL } from '@switchboard/db';

/**
 * A connection of the test's own LISTENing on the event streams' channel: `heard` holds every
 * payload (a tenant id) in the order Postgres delivered them.
 */
export async function listenToStreamNotifications(
  databaseUrl: string,
): Promise<{ heard: string[]; end(): Promise<void> }> {
  const heard: string[] = [];
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  client.on('notification', (n) => {
    if (n.channel === EVENT_STREAM_CHANNEL) heard.push(n.payload ?? '');
  });
  await client.query(`LISTEN ${EVENT_STREAM_CHANNEL}`);
  return { heard, end: () => client.end() };
}
