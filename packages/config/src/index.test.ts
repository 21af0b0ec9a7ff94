import { ConfigError, loadConfig } from './index';

const valid = {
  INGEST_TOKEN: 'ingest-token-0123456789',
  CURSOR_SECRET: 'cursor-secret-0123456789',
  SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
};

const failure = (env: Record<string, string>): ConfigError => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('applies the contract defaults', () => {
    const c = loadConfig(valid);
    expect(c.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/switchboard');
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.port).toBe(3000);
    expect(c.queuePrefix).toBe('{sb}');
    expect(c.webhook).toEqual({
      maxAttempts: 3,
      retryBackoffMs: [1000, 5000, 25000],
      disableAfterFailures: 20,
      timeoutMs: 10000,
      allowPrivateTargets: false,
    });
    expect(c.secretEncryptionKey).toHaveLength(32);
  });

  it('is frozen, nested objects included', () => {
    const c = loadConfig(valid);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.webhook)).toBe(true);
  });

  it('coerces numbers and booleans', () => {
    const c = loadConfig({ ...valid, PORT: '8080', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    expect(c.port).toBe(8080);
    expect(c.webhook.allowPrivateTargets).toBe(true);
  });

  it.each([
    [
      { INGEST_TOKEN: undefined },
      'INGEST_TOKEN',
      'INGEST_TOKEN is missing: expected a string of 16+ characters',
    ],
    [
      { CURSOR_SECRET: 'short' },
      'CURSOR_SECRET',
      'CURSOR_SECRET is invalid: expected a string of 16+ characters',
    ],
    [{ SECRET_ENCRYPTION_KEY: 'abc' }, 'SECRET_ENCRYPTION_KEY', 'SECRET_ENCRYPTION_KEY is invalid'],
    [{ PORT: 'eighty' }, 'PORT', 'PORT is invalid: expected a TCP port'],
    [{ PORT: '70000' }, 'PORT', 'PORT is invalid'],
    [
      { DATABASE_URL: 'mysql://x' },
      'DATABASE_URL',
      'DATABASE_URL is invalid: expected a postgres:// URL',
    ],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL', 'REDIS_URL is invalid'],
    [
      { WEBHOOK_RETRY_BACKOFF_MS: '1s,5s' },
      'WEBHOOK_RETRY_BACKOFF_MS',
      'WEBHOOK_RETRY_BACKOFF_MS is invalid',
    ],
    [
      { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' },
      'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      'expected true or false',
    ],
    [{ QUEUE_PREFIX: 'a:b' }, 'QUEUE_PREFIX', 'QUEUE_PREFIX is invalid'],
  ])('names the bad variable %j', (patch, variable, message) => {
    const env = { ...valid, ...patch } as Record<string, string>;
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
    const err = failure(env);
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(message);
    expect(err.message).not.toContain('\n');
  });

  it('treats an empty value as unset', () => {
    expect(loadConfig({ ...valid, PORT: '' }).port).toBe(3000);
  });
});
