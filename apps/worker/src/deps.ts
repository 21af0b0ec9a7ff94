import type { Config } from '@switchboard/config';
import { createKnex, type Knex } from '@switchboard/db';
import { createLogger, type Logger } from '@switchboard/logger';
import { closeRedis, createRedis, type Redis } from '@switchboard/queues';

/** The worker's composition root: its own pools, never shared with an API process. */
export interface WorkerDeps {
  config: Config;
  logger: Logger;
  knex: Knex;
  /** Blocking connection settings (maxRetriesPerRequest: null) as BullMQ workers require. */
  redis: Redis;
  close(): Promise<void>;
}

export function createWorkerDeps(config: Config, overrides: { logger?: Logger } = {}): WorkerDeps {
  const knex = createKnex(config.databaseUrl, {
    poolMax: Math.min(config.workerConcurrency + 2, 30),
  });
  const redis = createRedis(config.redisUrl, 'worker');
  return {
    config,
    logger: overrides.logger ?? createLogger('worker', config.logLevel),
    knex,
    redis,
    async close() {
      await Promise.allSettled([knex.destroy(), closeRedis(redis)]);
    },
  };
}
