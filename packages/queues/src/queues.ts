import { Queue } from 'bullmq';
import { closeRedis, type Redis } from './connection';
import { catalog, type Catalog, type CatalogKey } from './catalog';
import type { JobData } from './job-definition';
import { DEFAULT_JOB_OPTIONS } from './jobs';

/** One producer per catalog queue, typed by its payload. */
export type Queues = { [K in CatalogKey]: Queue<JobData<Catalog[K]>> } & {
  close(): Promise<void>;
};

/**
 * The producers of every queue in the catalog on one connection. With a `producer`
 * connection (enableOfflineQueue false) adds fail fast while Redis is away instead of hanging.
 */
export function createQueues(connection: Redis, prefix: string): Queues {
  const opts = { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS };
  const entries = (Object.keys(catalog) as CatalogKey[]).map((key) => {
    const queue = new Queue(catalog[key].queue, opts);
    queue.on('error', () => undefined); // the connection's own listener reports outages
    return [key, queue] as const;
  });
  const queues = Object.fromEntries(entries) as unknown as Queues;
  queues.close = async () => {
    await Promise.allSettled(entries.map(([, q]) => q.close()));
  };
  return queues;
}

/**
 * Closes the producers and their connection, the connection first. BullMQ removes its
 * listeners from a shared connection when a queue closes; a queue still starting up (Redis or
 * a cluster's slot map not ready yet, a SIGTERM right after boot) would then fail its start
 * with nobody listening, an uncaught 'error' that kills the process. Closed first, the
 * connection makes that start fail while the listeners are still there. The wait for it is
 * bounded: a start that never ends cannot fail later either.
 */
export async function closeQueues(queues: Queues, connection: Redis): Promise<void> {
  await closeRedis(connection);
  const starting = (Object.keys(catalog) as CatalogKey[]).map((key) =>
    queues[key].waitUntilReady(),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(starting),
    new Promise((resolve) => (timer = setTimeout(resolve, 1000))),
  ]);
  clearTimeout(timer);
  await queues.close();
}
