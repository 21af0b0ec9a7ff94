import { ConfigError } from './errors';
import { redisTarget, type RedisTarget } from './redis';
import type { envSchema } from './schema';

export type EnvName = keyof typeof envSchema.properties;

/** Validated (and coerced) variables: strings, integers and numbers as the schema says. */
export type EnvValues = Partial<Record<EnvName, string | number>>;

/** The typed, frozen configuration every process builds once at boot. */
export interface Config {
  readonly databaseUrl: string;
  /** A pooled Postgres connection idle this long is closed (the pools keep none open). */
  readonly databasePoolIdleMs: number;
  /**
   * One Redis server (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES) or a primary found
   * through Redis Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_NAME).
   */
  readonly redis: RedisTarget;
  readonly port: number;
  /** The worker's /metrics port. */
  readonly metricsPort: number;
  /** The API's /metrics port (a listener of its own, beside the public port). */
  readonly apiMetricsPort: number;
  /** Interface both /metrics endpoints listen on (loopback unless told otherwise). */
  readonly metricsHost: string;
  /**
   * The API's HTTP server: an idle keep-alive connection is closed after
   * `keepAliveTimeoutMs`, which must outlast the load balancer's idle timeout (else the
   * balancer reuses a connection the server is closing: a reset), and a request's headers
   * must arrive within `headersTimeoutMs` (> keepAliveTimeoutMs, as Node requires). One
   * client address (the TCP peer, unless TRUST_PROXY trusts it) holds at most
   * `maxConnectionsPerAddress` connections at once (0: no cap).
   */
  readonly http: {
    readonly keepAliveTimeoutMs: number;
    readonly headersTimeoutMs: number;
    readonly maxConnectionsPerAddress: number;
  };
  readonly ingestToken: string;
  /**
   * The SMS carrier's signing secrets (SMS_CARRIER_SIGNING_SECRET: one, or two while one
   * replaces the other); empty when none is set. Non-empty, an `sms.inbound` or `sms.status`
   * on telephony ingestion needs a valid signature of one of them besides INGEST_TOKEN.
   */
  readonly carrierSigningSecrets: readonly string[];
  readonly cursorSecret: string;
  /** 32 bytes; the AES-256-GCM key for secrets at rest. */
  readonly secretEncryptionKey: Buffer;
  readonly webhook: {
    readonly maxAttempts: number;
    /** The n-th value is the wait after the n-th failed attempt. */
    readonly retryBackoffMs: readonly number[];
    readonly disableAfterFailures: number;
    readonly timeoutMs: number;
    readonly allowPrivateTargets: boolean;
    /** A tenant's subscriptions beyond this are refused (409 limit_exceeded). */
    readonly maxSubscriptionsPerTenant: number;
    /**
     * Deliveries in flight at once, across every worker, to one subscription (or one legacy
     * webhook_url) and for one tenant; beyond them a delivery waits without holding a slot.
     */
    readonly maxInFlightPerSubscription: number;
    readonly maxInFlightPerTenant: number;
  };
  /**
   * The API rate limit of a tenant that has none of its own: a token bucket per API key
   * refilling at `perSecond`, holding at most `burst` (>= perSecond) requests.
   */
  readonly rateLimit: { readonly perSecond: number; readonly burst: number };
  /**
   * The limit of requests without a valid API key (none, malformed, unknown or revoked) or
   * with a wrong ingestion token: a token bucket per client address.
   */
  readonly anonymousRateLimit: { readonly perSecond: number; readonly burst: number };
  /**
   * Express's `trust proxy`: which proxies' X-Forwarded-For names the client address.
   * `false` (the default): none, the client is the TCP peer.
   */
  readonly trustProxy: boolean | number | readonly string[];
  /**
   * API: whether active keys are cached in the process (for at most 2 s, dropped when a
   * revocation commits). Off by default: a revoked key is then refused from the very next
   * request on every process; on, another process may accept it for the few milliseconds
   * its notification takes (2 s at worst if notifications are lost).
   */
  readonly apiKeyCache: boolean;
  /**
   * Limits of a tenant's campaigns together: one number is texted at most once per
   * `repeatWindowMs` (campaigns with allow_repeat excepted; 0: no limit), and all of them
   * share `tenantRatePerMinute`.
   */
  readonly campaigns: { readonly repeatWindowMs: number; readonly tenantRatePerMinute: number };
  readonly workerConcurrency: number;
  /** Days of delivery history (deliveries, attempts, outbox) kept for a tenant with no own. */
  readonly deliveryRetentionDays: number;
  /** Namespace of every Redis key of this deployment (queues, idempotency entries). */
  readonly queuePrefix: string;
  /** The worker's read-only queue dashboard (bull-board); null when off (the default). */
  readonly queueDashboard: { readonly token: string } | null;
  readonly simulatorSpeed: number;
  /** Drain deadline on SIGTERM, after the grace period. */
  readonly shutdownTimeoutMs: number;
  /** API: how long it keeps serving (failing /readyz) after SIGTERM before it stops accepting. */
  readonly shutdownGraceMs: number;
  readonly logLevel: string;
  /**
   * API: `GET /events/stream` (docs/API.md, Events). Heartbeats every `heartbeatMs` (leases
   * of open streams are renewed as often); at most `maxPerKey` streams per API key; an event
   * is streamed once it is `settleMs` old by Postgres' clock (docs/decisions/0101-event-streams.md); the shared read of a tenant's streams (docs/decisions/0118-one-read-per-tenant-for-event-streams.md) happens every `pollMs` without a notification; a client that has
   * more than `maxBufferBytes` waiting to be sent is dropped.
   */
  readonly eventStreams: {
    readonly heartbeatMs: number;
    readonly maxPerKey: number;
    readonly settleMs: number;
    readonly pollMs: number;
    readonly maxBufferBytes: number;
  };
  /**
   * OpenTelemetry tracing: on when an OTLP endpoint is set (and neither OTEL_SDK_DISABLED nor
   * OTEL_TRACES_EXPORTER=none says otherwise); `serviceName` is OTEL_SERVICE_NAME, null for
   * the process's own default (switchboard-api, switchboard-worker).
   */
  readonly tracing: { readonly enabled: boolean; readonly serviceName: string | null };
}

/** One setting: the variables it is read from and how they become its typed value. */
interface Setting<T> {
  variables: readonly EnvName[];
  /** `wasSet` tells a variable the operator set from one the schema defaulted. */
  build(v: EnvValues, wasSet: (name: EnvName) => boolean): T;
}

const str = (name: EnvName): Setting<string> => ({
  variables: [name],
  build: (v) => String(v[name]),
});
const optional = (value: string | number | undefined): string | undefined =>
  value === undefined ? undefined : String(value);
const num = (name: EnvName): Setting<number> => ({
  variables: [name],
  build: (v) => Number(v[name]),
});

/**
 * WEBHOOK_ALLOW_PRIVATE_TARGETS lifts the check that keeps webhooks off loopback, private and
 * cloud metadata addresses: a development setting (`npm start` sets it for the processes it
 * starts, never in `.env`). Invariant: no process with NODE_ENV=production runs with it, so a
 * production deployment that inherits it (a copied `.env`, a shell) stops at boot instead.
 */
function allowPrivateTargets(v: EnvValues): boolean {
  const allow = v.WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true';
  if (allow && v.NODE_ENV === 'production') {
    throw new ConfigError(
      'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      'WEBHOOK_ALLOW_PRIVATE_TARGETS=true is refused with NODE_ENV=production: it lets ' +
        'webhooks reach loopback, private and cloud metadata addresses (development only); unset it',
    );
  }
  return allow;
}

/** Every setting of Config, each built only when a command uses it. */
export const SETTINGS: { [K in keyof Config]: Setting<Config[K]> } = {
  databaseUrl: str('DATABASE_URL'),
  databasePoolIdleMs: num('DATABASE_POOL_IDLE_MS'),
  redis: {
    variables: [
      'REDIS_URL',
      'REDIS_CLUSTER_NODES',
      'REDIS_SENTINELS',
      'REDIS_SENTINEL_NAME',
      'QUEUE_PREFIX',
    ],
    build: (v, wasSet) =>
      redisTarget({
        url: String(v.REDIS_URL),
        urlWasSet: wasSet('REDIS_URL'),
        clusterNodes: optional(v.REDIS_CLUSTER_NODES),
        sentinels: optional(v.REDIS_SENTINELS),
        sentinelName: optional(v.REDIS_SENTINEL_NAME),
        queuePrefix: String(v.QUEUE_PREFIX),
      }),
  },
  port: num('PORT'),
  metricsPort: num('METRICS_PORT'),
  apiMetricsPort: num('API_METRICS_PORT'),
  metricsHost: str('METRICS_HOST'),
  http: {
    variables: [
      'HTTP_KEEP_ALIVE_TIMEOUT_MS',
      'HTTP_HEADERS_TIMEOUT_MS',
      'API_MAX_CONNECTIONS_PER_IP',
    ],
    build: (v) => {
      const keepAliveTimeoutMs = Number(v.HTTP_KEEP_ALIVE_TIMEOUT_MS);
      const headersTimeoutMs = Number(v.HTTP_HEADERS_TIMEOUT_MS);
      if (headersTimeoutMs <= keepAliveTimeoutMs) {
        throw new ConfigError(
          'HTTP_HEADERS_TIMEOUT_MS',
          `HTTP_HEADERS_TIMEOUT_MS is invalid: expected more than HTTP_KEEP_ALIVE_TIMEOUT_MS (${keepAliveTimeoutMs}), got ${headersTimeoutMs}`,
        );
      }
      const maxConnectionsPerAddress = Number(v.API_MAX_CONNECTIONS_PER_IP);
      return { keepAliveTimeoutMs, headersTimeoutMs, maxConnectionsPerAddress };
    },
  },
  ingestToken: str('INGEST_TOKEN'),
  carrierSigningSecrets: {
    variables: ['SMS_CARRIER_SIGNING_SECRET'],
    build: (v) =>
      v.SMS_CARRIER_SIGNING_SECRET === undefined
        ? []
        : String(v.SMS_CARRIER_SIGNING_SECRET).split(','),
  },
  cursorSecret: str('CURSOR_SECRET'),
  secretEncryptionKey: {
    variables: ['SECRET_ENCRYPTION_KEY'],
    build: (v) => Buffer.from(String(v.SECRET_ENCRYPTION_KEY), 'base64'),
  },
  webhook: {
    variables: [
      'WEBHOOK_MAX_ATTEMPTS',
      'WEBHOOK_RETRY_BACKOFF_MS',
      'WEBHOOK_DISABLE_AFTER_FAILURES',
      'WEBHOOK_TIMEOUT_MS',
      'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      'WEBHOOK_MAX_SUBSCRIPTIONS_PER_TENANT',
      'WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION',
      'WEBHOOK_MAX_IN_FLIGHT_PER_TENANT',
      'WORKER_CONCURRENCY',
      'NODE_ENV',
    ],
    build: (v) => ({
      maxAttempts: Number(v.WEBHOOK_MAX_ATTEMPTS),
      retryBackoffMs: String(v.WEBHOOK_RETRY_BACKOFF_MS).split(',').map(Number),
      disableAfterFailures: Number(v.WEBHOOK_DISABLE_AFTER_FAILURES),
      timeoutMs: Number(v.WEBHOOK_TIMEOUT_MS),
      allowPrivateTargets: allowPrivateTargets(v),
      maxSubscriptionsPerTenant: Number(v.WEBHOOK_MAX_SUBSCRIPTIONS_PER_TENANT),
      // Unset, the caps follow the slots of one worker: one tenant gets at most three
      // quarters of them and one subscription half, so neither a dead endpoint nor one
      // tenant's many endpoints can take a lone worker's last slots (they count across
      // every worker).
      maxInFlightPerSubscription:
        v.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION === undefined
          ? Math.max(1, Math.floor(Number(v.WORKER_CONCURRENCY) / 2))
          : Number(v.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION),
      maxInFlightPerTenant:
        v.WEBHOOK_MAX_IN_FLIGHT_PER_TENANT === undefined
          ? Math.max(1, Math.floor((Number(v.WORKER_CONCURRENCY) * 3) / 4))
          : Number(v.WEBHOOK_MAX_IN_FLIGHT_PER_TENANT),
    }),
  },
  rateLimit: {
    variables: ['RATE_LIMIT_PER_SECOND', 'RATE_LIMIT_BURST'],
    build: (v) => {
      const perSecond = Number(v.RATE_LIMIT_PER_SECOND);
      const burst = Number(v.RATE_LIMIT_BURST);
      if (burst < perSecond) {
        throw new ConfigError(
          'RATE_LIMIT_BURST',
          `RATE_LIMIT_BURST is invalid: expected at least RATE_LIMIT_PER_SECOND (${perSecond}), got ${burst}`,
        );
      }
      return { perSecond, burst };
    },
  },
  anonymousRateLimit: {
    variables: ['UNAUTHENTICATED_RATE_LIMIT_PER_SECOND', 'UNAUTHENTICATED_RATE_LIMIT_BURST'],
    build: (v) => {
      const perSecond = Number(v.UNAUTHENTICATED_RATE_LIMIT_PER_SECOND);
      const burst = Number(v.UNAUTHENTICATED_RATE_LIMIT_BURST);
      if (burst < perSecond) {
        throw new ConfigError(
          'UNAUTHENTICATED_RATE_LIMIT_BURST',
          `UNAUTHENTICATED_RATE_LIMIT_BURST is invalid: expected at least UNAUTHENTICATED_RATE_LIMIT_PER_SECOND (${perSecond}), got ${burst}`,
        );
      }
      return { perSecond, burst };
    },
  },
  trustProxy: {
    variables: ['TRUST_PROXY'],
    build: (v) => {
      const value = v.TRUST_PROXY === undefined ? 'false' : String(v.TRUST_PROXY);
      if (value === 'true' || value === 'false') return value === 'true';
      if (/^[0-9]+$/.test(value)) return Number(value);
      return value.split(',');
    },
  },
  apiKeyCache: {
    variables: ['API_KEY_CACHE_ENABLED'],
    build: (v) => v.API_KEY_CACHE_ENABLED === 'true',
  },
  campaigns: {
    variables: ['CAMPAIGN_REPEAT_WINDOW_HOURS', 'CAMPAIGN_TENANT_RATE_PER_MINUTE'],
    build: (v) => ({
      repeatWindowMs: Math.round(Number(v.CAMPAIGN_REPEAT_WINDOW_HOURS) * 3_600_000),
      tenantRatePerMinute: Number(v.CAMPAIGN_TENANT_RATE_PER_MINUTE),
    }),
  },
  workerConcurrency: num('WORKER_CONCURRENCY'),
  deliveryRetentionDays: num('DELIVERY_RETENTION_DAYS'),
  queuePrefix: str('QUEUE_PREFIX'),
  queueDashboard: {
    variables: ['QUEUE_DASHBOARD_ENABLED', 'QUEUE_DASHBOARD_TOKEN'],
    build: (v) => {
      if (v.QUEUE_DASHBOARD_ENABLED !== 'true') return null;
      if (v.QUEUE_DASHBOARD_TOKEN === undefined) {
        throw new ConfigError(
          'QUEUE_DASHBOARD_TOKEN',
          'QUEUE_DASHBOARD_TOKEN is missing: expected a string of 16+ characters (required when QUEUE_DASHBOARD_ENABLED=true)',
        );
      }
      return { token: String(v.QUEUE_DASHBOARD_TOKEN) };
    },
  },
  simulatorSpeed: num('SIMULATOR_SPEED'),
  shutdownTimeoutMs: num('SHUTDOWN_TIMEOUT_MS'),
  shutdownGraceMs: num('SHUTDOWN_GRACE_MS'),
  logLevel: str('LOG_LEVEL'),
  eventStreams: {
    variables: [
      'EVENT_STREAM_HEARTBEAT_MS',
      'EVENT_STREAM_MAX_PER_KEY',
      'EVENT_STREAM_SETTLE_MS',
      'EVENT_STREAM_POLL_MS',
      'EVENT_STREAM_MAX_BUFFER_BYTES',
    ],
    build: (v) => ({
      heartbeatMs: Number(v.EVENT_STREAM_HEARTBEAT_MS),
      maxPerKey: Number(v.EVENT_STREAM_MAX_PER_KEY),
      settleMs: Number(v.EVENT_STREAM_SETTLE_MS),
      pollMs: Number(v.EVENT_STREAM_POLL_MS),
      maxBufferBytes: Number(v.EVENT_STREAM_MAX_BUFFER_BYTES),
    }),
  },
  tracing: {
    variables: [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      'OTEL_TRACES_EXPORTER',
      'OTEL_SDK_DISABLED',
      'OTEL_SERVICE_NAME',
    ],
    build: (v) => ({
      enabled:
        (v.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined ||
          v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined) &&
        v.OTEL_SDK_DISABLED !== 'true' &&
        v.OTEL_TRACES_EXPORTER !== 'none',
      serviceName: v.OTEL_SERVICE_NAME === undefined ? null : String(v.OTEL_SERVICE_NAME),
    }),
  },
};

/**
 * The settings each command uses. A command is asked for these and no others, so an
 * operator running `npm run migrate` or the CLI needs no API or worker secrets.
 */
export const COMMAND_SETTINGS = {
  /** `npm run start:api`. */
  api: [
    'databaseUrl',
    'databasePoolIdleMs',
    'redis',
    'port',
    'apiMetricsPort',
    'metricsHost',
    'http',
    'ingestToken',
    'carrierSigningSecrets',
    'cursorSecret',
    'secretEncryptionKey',
    'webhook',
    // The oldest time POST /webhooks/{id}/recover accepts.
    'deliveryRetentionDays',
    'rateLimit',
    'anonymousRateLimit',
    'trustProxy',
    'apiKeyCache',
    'queuePrefix',
    'shutdownTimeoutMs',
    'shutdownGraceMs',
    'logLevel',
    'tracing',
    'eventStreams',
  ],
  /** `npm run start:worker`. */
  worker: [
    'databaseUrl',
    'databasePoolIdleMs',
    'redis',
    'metricsPort',
    'metricsHost',
    'secretEncryptionKey',
    'webhook',
    'campaigns',
    'workerConcurrency',
    'deliveryRetentionDays',
    'queuePrefix',
    'queueDashboard',
    'simulatorSpeed',
    'shutdownTimeoutMs',
    'logLevel',
    'tracing',
  ],
  /** `npm run migrate` and the operator CLI: Postgres only. */
  operator: ['databaseUrl'],
} as const satisfies Record<string, ReadonlyArray<keyof Config>>;

export type Command = keyof typeof COMMAND_SETTINGS;

/** The configuration of one command: only the settings it uses. */
export type ConfigFor<C extends Command> = Pick<Config, (typeof COMMAND_SETTINGS)[C][number]>;
export type ApiConfig = ConfigFor<'api'>;
export type WorkerConfig = ConfigFor<'worker'>;
export type OperatorConfig = ConfigFor<'operator'>;
