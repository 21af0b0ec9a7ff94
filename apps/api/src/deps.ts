import type { Config } from '@switchboard/config';
import {
  ApiKeysStore,
  CallsStore,
  createKnex,
  EventsStore,
  ReceptionistsStore,
  TenantsStore,
  WebhookSubscriptionsStore,
  type Knex,
} from '@switchboard/db';
import { createLogger, type Logger } from '@switchboard/logger';
import { closeRedis, createRedis, type Redis } from '@switchboard/queues';
import { secretBoxForKey, type SecretBox } from '@switchboard/crypto';
import {
  createWebhookSender,
  systemLookup,
  type LookupFn,
  type WebhookSender,
} from '@switchboard/webhooks';
import { CursorCodec } from './pagination/cursor';

/** Everything the API's routes use, built in one place (the composition root). */
export interface Deps {
  config: Config;
  logger: Logger;
  knex: Knex;
  redis: Redis;
  cursors: CursorCodec;
  /** Encrypts webhook signing secrets at rest (key id `k1` = SECRET_ENCRYPTION_KEY). */
  secretBox: SecretBox;
  /** The SSRF-safe sender; one keep-alive pool per process. */
  webhookSender: WebhookSender;
  /** Resolver used by the subscription URL check (the sender is built with the same one). */
  webhookLookup: LookupFn;
  stores: {
    tenants: TenantsStore;
    apiKeys: ApiKeysStore;
    receptionists: ReceptionistsStore;
    calls: CallsStore;
    events: EventsStore;
    webhookSubscriptions: WebhookSubscriptionsStore;
  };
  /** Closes pools and connections; call after the HTTP server stopped accepting. */
  close(): Promise<void>;
}

/** Test seams: a logger, a resolver and extra trusted CAs for the webhook sender. */
export interface DepsOverrides {
  logger?: Logger;
  webhookLookup?: LookupFn;
  /** PEM certificates trusted in addition to Node's roots (self-signed test receivers). */
  webhookCa?: string;
}

export function createDeps(config: Config, overrides: DepsOverrides = {}): Deps {
  const logger = overrides.logger ?? createLogger('api', config.logLevel);
  const knex = createKnex(config.databaseUrl);
  const redis = createRedis(config.redisUrl, 'producer');
  const webhookLookup = overrides.webhookLookup ?? systemLookup;
  const webhookSender = createWebhookSender({
    timeoutMs: config.webhook.timeoutMs,
    allowPrivateTargets: config.webhook.allowPrivateTargets,
    lookup: webhookLookup,
    ca: overrides.webhookCa,
  });
  return {
    config,
    logger,
    knex,
    redis,
    cursors: new CursorCodec(config.cursorSecret),
    secretBox: secretBoxForKey(config.secretEncryptionKey),
    webhookSender,
    webhookLookup,
    stores: {
      tenants: new TenantsStore(knex),
      apiKeys: new ApiKeysStore(knex),
      receptionists: new ReceptionistsStore(knex),
      calls: new CallsStore(knex),
      events: new EventsStore(knex),
      webhookSubscriptions: new WebhookSubscriptionsStore(knex),
    },
    async close() {
      webhookSender.close();
      await Promise.allSettled([knex.destroy(), closeRedis(redis)]);
    },
  };
}
