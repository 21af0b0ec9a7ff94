import type { Config } from '@switchboard/config';
import {
  ApiKeysStore,
  createKnex,
  EventsStore,
  ReceptionistsStore,
  TenantsStore,
  type Knex,
} from '@switchboard/db';
import { createLogger, type Logger } from '@switchboard/logger';
import { closeRedis, createRedis, type Redis } from '@switchboard/queues';
import { CursorCodec } from './pagination/cursor';

/** Everything the API's routes use, built in one place (the composition root). */
export interface Deps {
  config: Config;
  logger: Logger;
  knex: Knex;
  redis: Redis;
  cursors: CursorCodec;
  stores: {
    tenants: TenantsStore;
    apiKeys: ApiKeysStore;
    receptionists: ReceptionistsStore;
    events: EventsStore;
  };
  /** Closes pools and connections; call after the HTTP server stopped accepting. */
  close(): Promise<void>;
}

export function createDeps(config: Config, overrides: { logger?: Logger } = {}): Deps {
  const logger = overrides.logger ?? createLogger('api', config.logLevel);
  const knex = createKnex(config.databaseUrl);
  const redis = createRedis(config.redisUrl, 'producer');
  return {
    config,
    logger,
    knex,
    redis,
    cursors: new CursorCodec(config.cursorSecret),
    stores: {
      tenants: new TenantsStore(knex),
      apiKeys: new ApiKeysStore(knex),
      receptionists: new ReceptionistsStore(knex),
      events: new EventsStore(knex),
    },
    async close() {
      await Promise.allSettled([knex.destroy(), closeRedis(redis)]);
    },
  };
}
