import type { WorkerConfig } from '@switchboard/config';
import { secretBoxForKey, type SecretBox } from '@switchboard/crypto';
import { createKnex, createStores, type Knex, type Stores } from '@switchboard/db';
import { createLogger, type Logger } from '@switchboard/logger';
import {
  closeQueues,
  createQueues,
  createRedis,
  type Queues,
  type Redis,
} from '@switchboard/queues';
import { createWebhookSender, type LookupFn, type WebhookSender } from '@switchboard/webhooks';
import { createMetrics, type Metrics } from './metrics';

/** The worker's composition root: its own pools, never shared with an API process. */
export interface WorkerDeps {
  config: WorkerConfig;
  logger: Logger;
  knex: Knex;
  /** Blocking connection settings (maxRetriesPerRequest: null) as BullMQ workers require. */
  redis: Redis;
  queues: Queues;
  secretBox: SecretBox;
  sender: WebhookSender;
  metrics: Metrics;
  /** Every store, built once over `knex` (packages/db, `createStores`). */
  stores: Stores;
  close(): Promise<void>;
}

export interface WorkerOverrides {
  logger?: Logger;
  lookup?: LookupFn;
  /** PEM certificates trusted in addition to Node's roots (self-signed test receivers). */
  webhookCa?: string;
}

export function createWorkerDeps(
  config: WorkerConfig,
  overrides: WorkerOverrides = {},
): WorkerDeps {
  // Commits are durable by default; the delivery hot path (claim, attempt record, fan-out)
  // and the relay opt into asynchronous commits per transaction, because the reconciler
  // redoes them harmlessly (docs/decisions/0036-durable-and-asynchronous-commits.md lists every
  // write).
  const knex = createKnex(config, {
    poolMax: Math.min(config.workerConcurrency + 4, 40),
  });
  const redis = createRedis(config.redis, 'worker');
  const queues = createQueues(redis, config.queuePrefix);
  const sender = createWebhookSender({
    timeoutMs: config.webhook.timeoutMs,
    allowPrivateTargets: config.webhook.allowPrivateTargets,
    lookup: overrides.lookup,
    ca: overrides.webhookCa,
    // The delivery log shows 4 KiB of each response (docs/API.md, Webhooks).
    excerptBytes: 4096,
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
    stores: createStores(knex),
    async close() {
      sender.close();
      await Promise.allSettled([knex.destroy(), closeQueues(queues, redis)]);
    },
  };
}
