import { Queue } from 'bullmq';
import { dropErrorsAfterClose } from './closed-connections';
import { closeRedis, type Redis } from './connection';
import { catalog, type Catalog, type CatalogKey } from './catalog';
import type { JobData } from './job-definition';
import { DEFAULT_JOB_OPTIONS } from './jobs';

/** One producer per catalog queue, typed by its payload. */
export type Queues = { [K in CatalogKey]: Queue<JobData<Catalog[K]>> } & {
  close(): Promise<void>;
};

/** How long a failed producer is kept before the next use replaces it. */
const REPLACE_AFTER_MS = 1000;

/**
 * The producers of every queue in the catalog on one connection. With a `producer`
 * connection (enableOfflineQueue false) adds fail fast while Redis is away instead of hanging.
 *
 * BullMQ starts a producer once, with a version check on its connection; if that command
 * fails (Redis frozen or away at that moment, the request path's command timeout spent), the
 * producer stays failed for good. So each property is a getter: a producer whose start
 * failed is replaced on a use at least REPLACE_AFTER_MS later (never more often), and the
 * first enqueue after Redis is back starts a fresh one.
 */
export function createQueues(connection: Redis, prefix: string): Queues {
  const opts = { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS };
  const keys = Object.keys(catalog) as CatalogKey[];
  type Producer = { queue: Queue; failedAt: number | null };
  const open = (key: CatalogKey): Producer => {
    const queue = dropErrorsAfterClose(new Queue(catalog[key].queue, opts));
    const producer: Producer = { queue, failedAt: null };
    producer.queue.on('error', () => undefined); // the connection's own listener reports outages
    producer.queue.waitUntilReady().catch(() => (producer.failedAt = Date.now()));
    return producer;
  };
  const producers = new Map(keys.map((key) => [key, open(key)] as const));
  const current = (key: CatalogKey): Queue => {
    const p = producers.get(key) as Producer;
    if (p.failedAt === null || Date.now() - p.failedAt < REPLACE_AFTER_MS) return p.queue;
    void p.queue.close().catch(() => undefined);
    const fresh = open(key);
    producers.set(key, fresh);
    return fresh.queue;
  };
  const queues = {} as Queues;
  for (const key of keys) Object.defineProperty(queues, key, { get: () => current(key) });
  queues.close = async () => {
    await Promise.allSettled([...producers.values()].map((p) => p.queue.close()));
  };
  return queues;
}

/**
 * Closes the producers, then their connection. A producer still starting when it closes
 * fails its start once the connection goes; that failure is dropped (closed-connections.ts).
 */
export async function closeQueues(queues: Queues, connection: Redis): Promise<void> {
  await queues.close();
  await closeRedis(connection);
}
