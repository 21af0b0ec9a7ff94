/**
 * The environment contract (CONTRACT.md section 11). Each property carries the one-line
 * `description` that is printed when the variable is missing or invalid, so the schema is
 * the only place that knows what a valid value looks like.
 */
export const envSchema = {
  type: 'object',
  required: ['INGEST_TOKEN', 'CURSOR_SECRET', 'SECRET_ENCRYPTION_KEY'],
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
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3000, description: 'a TCP port' },
    METRICS_PORT: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
      default: 9464,
      description: 'a TCP port for the worker /metrics endpoint',
    },
    INGEST_TOKEN: { type: 'string', minLength: 16, description: 'a string of 16+ characters' },
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
    WEBHOOK_ALLOW_PRIVATE_TARGETS: {
      type: 'string',
      enum: ['true', 'false'],
      default: 'false',
      description: 'true or false',
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
    LOG_LEVEL: {
      type: 'string',
      enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
      description: 'one of fatal, error, warn, info, debug, trace, silent',
    },
  },
} as const;
