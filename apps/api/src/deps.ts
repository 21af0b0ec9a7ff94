import type { ApiConfig } from '@switchboard/config';
import { AnonymousLimits } from './http/anonymous-limit';
import {
  createKnex,
  createStores,
  watchApiKeyChanges,
  type Knex,
  type Stores,
} from '@switchboard/db';
import { bufferedStdout, createLogger, type Logger } from '@switchboard/logger';
import {
  closeQueues,
  createQueues,
  createRedis,
  type Queues,
  type Redis,
} from '@switchboard/queues';
import { secretBoxForKey, type SecretBox } from '@switchboard/crypto';
import {
  createWebhookSender,
  systemLookup,
  type LookupFn,
  type WebhookSender,
} from '@switchboard/webhooks';
import { KeyRateLimits } from './http/key-rate-limit';
import { Lifecycle } from './http/lifecycle';
import { RefusalLog } from './http/refusal-log';
import { DEFAULT_IDEMPOTENCY_OPTIONS, Idempotency, type IdempotencyOptions } from './idempotency';
import { createApiMetrics, type ApiMetrics } from './metrics/registry';
import { CursorCodec } from './pagination/cursor';
import { EventStreamHub } from './features/events/hub';

/** Connections of the event streams' pool (besides the one LISTEN connection). */
const STREAM_POOL_MAX = 2;
const STREAM_ACQUIRE_TIMEOUT_MS = 10_000;
/** The least time a client is given to take what was written before it is dropped. */
const MIN_DRAIN_MS = 10_000;

/** Everything the API's routes use, built in one place (the composition root). */
export interface Deps {
  config: ApiConfig;
  logger: Logger;
  /** Prometheus metrics of this process (served on API_METRICS_PORT by server.ts). */
  metrics: ApiMetrics;
  knex: Knex;
  redis: Redis;
  /** Producers on the fail-fast connection: an add during a Redis outage rejects at once. */
  queues: Queues;
  cursors: CursorCodec;
  /** Encrypts webhook signing secrets at rest (key id `k1` = SECRET_ENCRYPTION_KEY). */
  secretBox: SecretBox;
  /** The SSRF-safe sender; one keep-alive pool per process. */
  webhookSender: WebhookSender;
  /** Resolver used by the subscription URL check (the sender is built with the same one). */
  webhookLookup: LookupFn;
  /** Idempotency-Key handling on the fail-fast Redis connection (every creating POST). */
  idempotency: Idempotency;
  /** The per-key rate limit of every authenticated request (token buckets in Redis). */
  keyRateLimits: KeyRateLimits;
  /** The per-address limit of requests without a valid credential (before authentication). */
  anonymousLimits: AnonymousLimits;
  /** The log of requests refused early, summed (one line every 10 s while there are any). */
  refusalLog: RefusalLog;
  /** Stopping state and the work in flight (requests, handlers) that shutdown waits for. */
  lifecycle: Lifecycle;
  /** Every store, built once over `knex` (packages/db, `createStores`). */
  stores: Stores;
  /** The open event streams of this process, their LISTEN connection and their own pool. */
  eventStreams: EventStreamHub;
  /** Closes pools and connections; call once `lifecycle.idle()` has resolved. */
  close(): Promise<void>;
}

/** Test seams: a logger, a resolver and extra trusted CAs for the webhook sender. */
export interface DepsOverrides {
  logger?: Logger;
  webhookLookup?: LookupFn;
  /** PEM certificates trusted in addition to Node's roots (self-signed test receivers). */
  webhookCa?: string;
  /** Idempotency TTLs and the crash-injection hook (tests only). */
  idempotency?: Partial<IdempotencyOptions>;
}

export function createDeps(config: ApiConfig, overrides: DepsOverrides = {}): Deps {
  const metrics = createApiMetrics();
  // Lines are written in batches off the request path; server.ts flushes them before exit.
  const logger =
    overrides.logger ??
    createLogger(
      'api',
      config.logLevel,
      bufferedStdout(() => metrics.logLinesDropped.inc()),
    );
  const knex = createKnex(config);
  const redis = createRedis(config.redis, 'producer');
  const queues = createQueues(redis, config.queuePrefix);
  // With API_KEY_CACHE_ENABLED the key store caches active keys while it hears of
  // revocations and limit changes (ACTIVE_KEY_TTL_MS); off, every request looks its key up.
  const stores = createStores(knex, { cacheActiveKeys: config.apiKeyCache });
  const keyChanges = config.apiKeyCache
    ? watchApiKeyChanges(config.databaseUrl, stores.apiKeys, (err) =>
        logger.warn(
          { err },
          'api key changes: LISTEN connection lost; keys are looked up on every request meanwhile',
        ),
      )
    : { close: async () => undefined };
  const webhookLookup = overrides.webhookLookup ?? systemLookup;
  const webhookSender = createWebhookSender({
    timeoutMs: config.webhook.timeoutMs,
    allowPrivateTargets: config.webhook.allowPrivateTargets,
    lookup: webhookLookup,
    ca: overrides.webhookCa,
  });
  const lifecycle = new Lifecycle();
  // The event streams' own pool: a stream's lease (taken, renewed, let go) and its reads
  // (its catch-up, its tenant's shared reads) go through it, never through `knex`, so at most
  // STREAM_POOL_MAX connections serve every stream of the process and requests never wait
  // behind them (docs/decisions/0118-one-read-per-tenant-for-event-streams.md). Its work
  // queues by design (a thousand streams reconnecting at once): it waits longer for a
  // connection than a request does.
  const streamKnex = createKnex(config, {
    poolMax: STREAM_POOL_MAX,
    acquireTimeoutMs: STREAM_ACQUIRE_TIMEOUT_MS,
  });
  const streamStores = createStores(streamKnex);
  const refusalLog = new RefusalLog(logger);
  const eventStreams = new EventStreamHub(
    { log: streamStores.eventLog, leases: streamStores.eventStreams },
    {
      databaseUrl: config.databaseUrl,
      renewMs: config.eventStreams.heartbeatMs,
      maxPerKey: config.eventStreams.maxPerKey,
      timing: {
        settleMs: config.eventStreams.settleMs,
        pollMs: config.eventStreams.pollMs,
        // A client that takes nothing for two heartbeats (10 s at least) is gone or too slow.
        drainTimeoutMs: Math.max(config.eventStreams.heartbeatMs * 2, MIN_DRAIN_MS),
      },
    },
    metrics.eventStreamReads,
    logger,
  );
  // Streams never end by themselves: a stop ends them, so the server can close.
  lifecycle.onStop(() => eventStreams.stop());
  return {
    config,
    logger,
    metrics,
    knex,
    redis,
    queues,
    cursors: new CursorCodec(config.cursorSecret),
    secretBox: secretBoxForKey(config.secretEncryptionKey),
    webhookSender,
    webhookLookup,
    idempotency: new Idempotency(
      redis,
      config.queuePrefix,
      { ...DEFAULT_IDEMPOTENCY_OPTIONS, ...overrides.idempotency },
      logger,
    ),
    keyRateLimits: new KeyRateLimits(redis, config.queuePrefix, config.rateLimit, logger),
    anonymousLimits: new AnonymousLimits(
      redis,
      config.queuePrefix,
      config.anonymousRateLimit,
      logger,
    ),
    refusalLog,
    lifecycle,
    stores,
    eventStreams,
    async close() {
      refusalLog.close();
      webhookSender.close();
      await eventStreams.close();
      await keyChanges.close();
      await Promise.allSettled([knex.destroy(), streamKnex.destroy(), closeQueues(queues, redis)]);
    },
  };
}
