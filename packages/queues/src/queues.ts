import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { DeliveryJob, EventJob, OutboundCallJob } from './jobs';
import { DEFAULT_JOB_OPTIONS } from './jobs';
import { QUEUES } from './names';

export interface Queues {
  events: Queue<EventJob>;
  deliveries: Queue<DeliveryJob>;
  outboundCalls: Queue<OutboundCallJob>;
  close(): Promise<void>;
}

/**
 * The producers of every queue on one connection. With a `producer` connection
 * (enableOfflineQueue false) adds fail fast while Redis is away instead of hanging.
 */
export function createQueues(connection: Redis, prefix: string): Queues {
  const opts = { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS };
  const events = new Queue<EventJob>(QUEUES.events, opts);
  const deliveries = new Queue<DeliveryJob>(QUEUES.deliveries, opts);
  const outboundCalls = new Queue<OutboundCallJob>(QUEUES.outboundCalls, opts);
  for (const q of [events, deliveries, outboundCalls]) q.on('error', () => undefined);
  return {
    events,
    deliveries,
    outboundCalls,
    async close() {
      await Promise.allSettled([events.close(), deliveries.close(), outboundCalls.close()]);
    },
  };
}
