import Ajv from 'ajv';
import { envSchema } from './schema';

/** The typed, frozen configuration every process builds once at boot. */
export interface Config {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly port: number;
  readonly metricsPort: number;
  readonly ingestToken: string;
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
  };
  readonly workerConcurrency: number;
  /** Namespace of every Redis key of this deployment (queues, idempotency entries). */
  readonly queuePrefix: string;
  readonly simulatorSpeed: number;
  readonly shutdownTimeoutMs: number;
  readonly logLevel: string;
}

/** Thrown with a one-line message that names the first bad variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

type EnvName = keyof typeof envSchema.properties;
const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false, strict: false });
const validate = ajv.compile<Record<EnvName, string | number>>(envSchema);

/**
 * Parses the environment into a Config. Only the variables of the schema are read; empty
 * strings count as unset so `FOO= npm start` falls back to the default.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string> = {};
  for (const name of Object.keys(envSchema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== '') input[name] = value;
  }
  if (!validate(input)) {
    const err = validate.errors?.[0];
    const name = (
      err?.keyword === 'required'
        ? (err.params as { missingProperty: string }).missingProperty
        : (err?.instancePath.slice(1) ?? 'configuration')
    ) as EnvName;
    const spec = envSchema.properties[name];
    const what = input[name] === undefined ? 'is missing' : 'is invalid';
    throw new ConfigError(
      name,
      `${name} ${what}: expected ${spec?.description ?? 'a valid value'}`,
    );
  }
  const v = input as unknown as Record<EnvName, never>;
  const backoff = String(v.WEBHOOK_RETRY_BACKOFF_MS).split(',').map(Number);
  return deepFreeze<Config>({
    databaseUrl: v.DATABASE_URL,
    redisUrl: v.REDIS_URL,
    port: v.PORT,
    metricsPort: v.METRICS_PORT,
    ingestToken: v.INGEST_TOKEN,
    cursorSecret: v.CURSOR_SECRET,
    secretEncryptionKey: Buffer.from(v.SECRET_ENCRYPTION_KEY, 'base64'),
    webhook: {
      maxAttempts: v.WEBHOOK_MAX_ATTEMPTS,
      retryBackoffMs: backoff,
      disableAfterFailures: v.WEBHOOK_DISABLE_AFTER_FAILURES,
      timeoutMs: v.WEBHOOK_TIMEOUT_MS,
      allowPrivateTargets: v.WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true',
    },
    workerConcurrency: v.WORKER_CONCURRENCY,
    queuePrefix: v.QUEUE_PREFIX,
    simulatorSpeed: v.SIMULATOR_SPEED,
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS,
    logLevel: v.LOG_LEVEL,
  });
}

/**
 * Boot helper for processes: loads the config or prints the one-line reason and exits 1.
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`switchboard: configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
