import type { Config } from '@switchboard/config';
import { secretBoxForKey, type SecretBox } from '@switchboard/crypto';
import {
  CallsStore,
  createKnex,
  DeliveriesStore,
  EventsStore,
  ReceptionistsStore,
  WebhookSubscriptionsStore,
  type Knex,
} from '@switchboard/db';
import { createLogger, type Logger } from '@switchboard/logger';
import {
  closeRedis,
  createQueues,
  createRedis,
  type Queues,
  type Redis,
} from '@switchboard/queues';
import { createWebhookSender, type LookupFn, type WebhookSender } from '@switchboard/webhooks';
import { createMetrics, type Metrics } from './metrics';

/** The worker's composition root: its own pools, never shared with an API process. */
export interface WorkerDeps {
  config: Config;
  logger: Logger;
  knex: Knex;
  /** Blocking connection settings (maxRetriesPerRequest: null) as BullMQ workers require. */
  redis: Redis;
  queues: Queues;
  secretBox: SecretBox;
  sender: WebhookSender;
  metrics: Metrics;
  stores: {
    events: EventsStore;
    deliveries: DeliveriesStore;
    subscriptions: WebhookSubscriptionsStore;
    receptionists: ReceptionistsStore;
    calls: CallsStore;
  };
  close(): Promise<void>;
}

export interface WorkerOverrides {
  logger?: Logger;
  lookup?: LookupFn;
  /** PEM certificates trusted in addition to Node's roots (self-signed test receivers). */
  webhookCa?: string;
}

export function createWorkerDeps(config: Config, overrides: WorkerOverrides = {}): WorkerDeps {
  // Every worker write is recoverable (see createKnex), so its commits need not wait for
  // the WAL flush: that wait was most of a delivery's cost.
  const knex = createKnex(config.databaseUrl, {
    poolMax: Math.min(config.workerConcurrency + 4, 40),
    synchronousCommit: 'off',
  });
  const redis = createRedis(config.redisUrl, 'worker');
  const queues = createQueues(redis, config.queuePrefix);
  const sender = createWebhookSender({
    timeoutMs: config.webhook.timeoutMs,
    allowPrivateTargets: config.webhook.allowPrivateTargets,
    lookup: overrides.lookup,
    ca: overrides.webhookCa,
  });
  return {
    config,
    logger: overrides.logger ?? createLogger('worker', config.logLevel),
    knex,
    redis,
    queues,
    secretBox: secretBoxForKey(config.secretEncryptionKey),
    sender,
    metrics: createMetrics(),
    stores: {
      events: new EventsStore(knex),
      deliveries: new DeliveriesStore(knex),
      subscriptions: new WebhookSubscriptionsStore(knex),
      receptionists: new ReceptionistsStore(knex),
      calls: new CallsStore(knex),
    },
    async close() {
      sender.close();
      await queues.close();
      await Promise.allSettled([knex.destroy(), closeRedis(redis)]);
    },
  };
}
