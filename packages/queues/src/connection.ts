import IORedis, { type Redis, type RedisOptions } from 'ioredis';

export type { Redis };

/**
 * Redis connections with the BullMQ production settings:
 * - `worker`: blocking commands must wait out an outage, so `maxRetriesPerRequest: null` and
 *   an offline queue (BullMQ requires both for workers);
 * - `producer`: used on request paths (the API), fails fast when Redis is down
 *   (`enableOfflineQueue: false`, one retry, short command timeout) so a request becomes a
 *   503 instead of a hang.
 */
export function createRedis(url: string, role: 'worker' | 'producer'): Redis {
  const base: RedisOptions = {
    connectionName: `switchboard-${role}`,
    // Reconnect forever with a capped backoff; the role decides what callers see meanwhile.
    retryStrategy: (times) => Math.min(times * 200, 2000),
  };
  const options: RedisOptions =
    role === 'worker'
      ? { ...base, maxRetriesPerRequest: null, enableReadyCheck: false }
      : {
          ...base,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          commandTimeout: 2000,
          connectTimeout: 2000,
        };
  const redis = new IORedis(url, options);
  // An 'error' listener is mandatory: without it ioredis would crash the process on an outage.
  redis.on('error', () => undefined);
  return redis;
}

/** Closes gracefully when connected; otherwise stops reconnecting at once. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    await redis.quit().catch(() => undefined);
  }
  redis.disconnect(false);
}
