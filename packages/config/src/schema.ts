/**
 * The environment contract (the table of docs/configuration.md). Each property carries the
 * one-line `description` that is printed when the variable is missing or invalid, so the
 * schema is the only place that knows what a valid value looks like. A variable without a
 * `default` is required by every command that uses it (see settings.ts), unless it is marked
 * `x-optional` (absent means off); no command needs them all.
 */
export const envSchema = {
  type: 'object',
  properties: {
    DATABASE_URL: {
      type: 'string',
      pattern: '^postgres(ql)?://',
      default: 'postgres://postgres@127.0.0.1:5432/switchboard',
      description: 'a postgres:// URL',
    },
    REDIS_URL: {
      type: 'string',
      pattern: '^rediss?://',
      default: 'redis://127.0.0.1:6379',
      description: 'a redis:// URL',
    },
    REDIS_CLUSTER_NODES: {
      type: 'string',
      'x-optional': true,
      pattern: '^rediss?://[^,\\s]+(,rediss?://[^,\\s]+)*$',
      description:
        'a comma-separated list of redis://host:port seeds of one Redis Cluster (instead of REDIS_URL)',
    },
    REDIS_SENTINELS: {
      type: 'string',
      'x-optional': true,
      pattern: '^[^,\\s/@]+:[0-9]{1,5}(,[^,\\s/@]+:[0-9]{1,5})*$',
      description:
        'a comma-separated list of host:port addresses of the Redis Sentinels watching REDIS_SENTINEL_NAME',
    },
    REDIS_SENTINEL_NAME: {
      type: 'string',
      'x-optional': true,
      pattern: '^[A-Za-z0-9._-]{1,64}$',
      description:
        'the name the Sentinels monitor the primary under (sentinel monitor NAME ...), e.g. mymaster',
    },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3000, description: 'a TCP port' },
    METRICS_PORT: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
      default: 9464,
      description: 'a TCP port for the worker /metrics endpoint',
    },
    API_METRICS_PORT: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
      default: 9465,
      description: 'a TCP port for the API /metrics endpoint',
    },
    METRICS_HOST: {
      type: 'string',
      pattern: '^[0-9A-Za-z.:_-]{1,253}$',
      default: '127.0.0.1',
      description: 'an address for the /metrics endpoints to listen on, e.g. 0.0.0.0',
    },
    HTTP_KEEP_ALIVE_TIMEOUT_MS: {
      type: 'integer',
      minimum: 1000,
      maximum: 3600000,
      default: 65000,
      description:
        'milliseconds an idle keep-alive connection stays open (above the load balancer idle timeout)',
    },
    HTTP_HEADERS_TIMEOUT_MS: {
      type: 'integer',
      minimum: 1000,
      maximum: 3600000,
      default: 66000,
      description:
        'milliseconds to receive the request headers; more than HTTP_KEEP_ALIVE_TIMEOUT_MS',
    },
    API_MAX_CONNECTIONS_PER_IP: {
      type: 'integer',
      minimum: 0,
      maximum: 1000000,
      default: 256,
      description:
        'open connections the API accepts from one client address, a non-negative integer (0: no cap)',
    },
    INGEST_TOKEN: { type: 'string', minLength: 16, description: 'a string of 16+ characters' },
    SMS_CARRIER_SIGNING_SECRET: {
      type: 'string',
      'x-optional': true,
      pattern: '^[\\x21-\\x2b\\x2d-\\x7e]{32,}(,[\\x21-\\x2b\\x2d-\\x7e]{32,})?$',
      description:
        "the SMS carrier's signing secret, 32+ visible characters without commas, or two separated by a comma while one replaces the other (unset: no signature needed)",
    },
    CURSOR_SECRET: { type: 'string', minLength: 16, description: 'a string of 16+ characters' },
    SECRET_ENCRYPTION_KEY: {
      type: 'string',
      pattern: '^[A-Za-z0-9+/]{43}=$',
      description: 'base64 of exactly 32 bytes (openssl rand -base64 32)',
    },
    WEBHOOK_MAX_ATTEMPTS: {
      type: 'integer',
      minimum: 1,
      maximum: 20,
      default: 3,
      description: 'an integer from 1 to 20',
    },
    WEBHOOK_RETRY_BACKOFF_MS: {
      type: 'string',
      pattern: '^\\d{1,9}(,\\d{1,9})*$',
      default: '1000,5000,25000',
      description: 'a comma-separated list of milliseconds, e.g. 1000,5000,25000',
    },
    WEBHOOK_DISABLE_AFTER_FAILURES: {
      type: 'integer',
      minimum: 1,
      maximum: 10000,
      default: 20,
      description: 'a positive integer',
    },
    WEBHOOK_TIMEOUT_MS: {
      type: 'integer',
      minimum: 100,
      maximum: 120000,
      default: 10000,
      description: 'milliseconds from 100 to 120000',
    },
    // No schema default: unset, they follow WORKER_CONCURRENCY (see loadConfig).
    WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: {
      type: 'integer',
      'x-optional': true,
      minimum: 1,
      maximum: 100000,
      description: 'a positive integer (deliveries in flight to one subscription, all workers)',
    },
    WEBHOOK_MAX_IN_FLIGHT_PER_TENANT: {
      type: 'integer',
      'x-optional': true,
      minimum: 1,
      maximum: 100000,
      description: 'a positive integer (deliveries in flight for one tenant, all workers)',
    },
    WEBHOOK_ALLOW_PRIVATE_TARGETS: {
      type: 'string',
      enum: ['true', 'false'],
      default: 'false',
      description: 'true or false',
    },
    WEBHOOK_MAX_SUBSCRIPTIONS_PER_TENANT: {
      type: 'integer',
      minimum: 1,
      maximum: 100000,
      default: 100,
      description: 'a positive integer',
    },
    RATE_LIMIT_PER_SECOND: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000,
      default: 100,
      description:
        'requests a second per API key, a positive integer (the default of every tenant)',
    },
    RATE_LIMIT_BURST: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000,
      default: 200,
      description: 'the burst per API key: a positive integer, at least RATE_LIMIT_PER_SECOND',
    },
    UNAUTHENTICATED_RATE_LIMIT_PER_SECOND: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000,
      default: 10,
      description:
        'requests a second per client address without a valid API key or ingestion token, a positive integer',
    },
    UNAUTHENTICATED_RATE_LIMIT_BURST: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000,
      default: 100,
      description:
        'the burst per client address without a valid key: a positive integer, at least UNAUTHENTICATED_RATE_LIMIT_PER_SECOND',
    },
    TRUST_PROXY: {
      type: 'string',
      'x-optional': true,
      pattern:
        '^(true|false|[0-9]{1,2}|(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(/[0-9]{1,3})?)(,(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(/[0-9]{1,3})?))*)$',
      description:
        'which proxies may set X-Forwarded-For: true, a number of hops, or a comma-separated list of addresses, subnets or loopback/linklocal/uniquelocal (unset: none)',
    },
    CAMPAIGN_REPEAT_WINDOW_HOURS: {
      type: 'number',
      minimum: 0,
      maximum: 8760,
      default: 24,
      description:
        "hours within which a tenant's campaigns text one number at most once, 0 to 8760 (0: no limit)",
    },
    CAMPAIGN_TENANT_RATE_PER_MINUTE: {
      type: 'integer',
      minimum: 1,
      maximum: 100000,
      default: 1200,
      description:
        'messages a minute shared by all running campaigns of one tenant, a positive integer',
    },
    WORKER_CONCURRENCY: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 20,
      description: 'an integer from 1 to 1000',
    },
    QUEUE_PREFIX: {
      type: 'string',
      pattern: '^[^:\\s]{1,64}$',
      default: '{sb}',
      description: 'a short prefix without ":" or spaces, e.g. {sb}',
    },
    API_KEY_CACHE_ENABLED: {
      type: 'string',
      enum: ['true', 'false'],
      default: 'false',
      description:
        'true or false (cache active API keys for up to 2 s; see docs/decisions/0028-api-key-cache.md)',
    },
    QUEUE_DASHBOARD_ENABLED: {
      type: 'string',
      enum: ['true', 'false'],
      default: 'false',
      description: 'true or false',
    },
    QUEUE_DASHBOARD_TOKEN: {
      type: 'string',
      'x-optional': true,
      minLength: 16,
      description: 'a string of 16+ characters (the queue dashboard password)',
    },
    SIMULATOR_SPEED: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 1000,
      default: 1,
      description: 'a positive number (2 = twice as fast)',
    },
    SHUTDOWN_TIMEOUT_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 600000,
      default: 10000,
      description: 'milliseconds',
    },
    DATABASE_POOL_IDLE_MS: {
      type: 'integer',
      minimum: 100,
      maximum: 3600000,
      default: 30000,
      description: 'milliseconds, from 100 to 3600000',
    },
    SHUTDOWN_GRACE_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 600000,
      default: 2000,
      description: 'milliseconds',
    },
    DELIVERY_RETENTION_DAYS: {
      type: 'integer',
      minimum: 1,
      maximum: 90,
      default: 30,
      description: 'an integer from 1 to 90 (days of webhook delivery history kept)',
    },
    EVENT_STREAM_HEARTBEAT_MS: {
      type: 'integer',
      minimum: 50,
      maximum: 600000,
      default: 15000,
      description: 'milliseconds between heartbeats of an event stream, 50 to 600000',
    },
    EVENT_STREAM_MAX_PER_KEY: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 5,
      description: 'event streams open at once per API key, across every API process, 1 to 1000',
    },
    EVENT_STREAM_SETTLE_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 60000,
      default: 1000,
      description:
        'milliseconds an event waits before it is streamed (its transaction may commit that late), 0 to 60000',
    },
    EVENT_STREAM_POLL_MS: {
      type: 'integer',
      minimum: 50,
      maximum: 600000,
      default: 5000,
      description:
        "milliseconds between reads of an idle tenant's event streams without a notification",
    },
    EVENT_STREAM_MAX_BUFFER_BYTES: {
      type: 'integer',
      minimum: 1024,
      maximum: 67108864,
      default: 1048576,
      description: 'bytes an event stream may have waiting for a slow client before it is ended',
    },
    // OpenTelemetry's standard variables: the ones that decide whether tracing is on and
    // the service name. The exporter itself reads the rest (OTEL_EXPORTER_OTLP_HEADERS...).
    OTEL_EXPORTER_OTLP_ENDPOINT: {
      type: 'string',
      'x-optional': true,
      pattern: '^https?://',
      description: 'an http(s):// URL of an OTLP/HTTP collector, e.g. http://127.0.0.1:4318',
    },
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
      type: 'string',
      'x-optional': true,
      pattern: '^https?://',
      description: 'an http(s):// URL of an OTLP/HTTP traces endpoint (ends in /v1/traces)',
    },
    OTEL_TRACES_EXPORTER: {
      type: 'string',
      'x-optional': true,
      enum: ['otlp', 'none'],
      description: 'otlp or none',
    },
    OTEL_SDK_DISABLED: {
      type: 'string',
      'x-optional': true,
      enum: ['true', 'false'],
      description: 'true or false',
    },
    OTEL_SERVICE_NAME: {
      type: 'string',
      'x-optional': true,
      minLength: 1,
      maxLength: 200,
      description: 'a service name, e.g. switchboard-api',
    },
    // Node's own convention, read here for one thing: `production` refuses the settings that
    // exist for development only (WEBHOOK_ALLOW_PRIVATE_TARGETS).
    NODE_ENV: {
      type: 'string',
      'x-optional': true,
      pattern: '^[A-Za-z0-9_-]{1,32}$',
      description: 'a word such as production or development',
    },
    LOG_LEVEL: {
      type: 'string',
      enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
      description: 'one of fatal, error, warn, info, debug, trace, silent',
    },
  },
} as const;
