import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, loadConfigFor, withDotEnv } from './index';

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
    expect(c.redis).toEqual({ mode: 'standalone', url: 'redis://127.0.0.1:6379' });
    expect(c.port).toBe(3000);
    expect(c.queuePrefix).toBe('{sb}');
    expect(c.queueDashboard).toBeNull();
    expect(c.webhook).toEqual({
      maxAttempts: 3,
      retryBackoffMs: [1000, 5000, 25000],
      disableAfterFailures: 20,
      timeoutMs: 10000,
      allowPrivateTargets: false,
      maxSubscriptionsPerTenant: 100,
      maxInFlightPerSubscription: 10,
      maxInFlightPerTenant: 15,
    });
    expect(c.metricsHost).toBe('127.0.0.1');
    expect(c.shutdownGraceMs).toBe(2000);
    expect(c.secretEncryptionKey).toHaveLength(32);
  });

  it('derives the in-flight caps from WORKER_CONCURRENCY unless they are set', () => {
    const derived = loadConfig({ ...valid, WORKER_CONCURRENCY: '50' }).webhook;
    expect([derived.maxInFlightPerSubscription, derived.maxInFlightPerTenant]).toEqual([25, 37]);
    const one = loadConfig({ ...valid, WORKER_CONCURRENCY: '1' }).webhook;
    expect([one.maxInFlightPerSubscription, one.maxInFlightPerTenant]).toEqual([1, 1]);
    const set = loadConfig({
      ...valid,
      WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: '7',
      WEBHOOK_MAX_IN_FLIGHT_PER_TENANT: '40',
    }).webhook;
    expect([set.maxInFlightPerSubscription, set.maxInFlightPerTenant]).toEqual([7, 40]);
    expect(failure({ ...valid, WEBHOOK_MAX_IN_FLIGHT_PER_TENANT: '0' }).variable).toBe(
      'WEBHOOK_MAX_IN_FLIGHT_PER_TENANT',
    );
  });

  it('is frozen, nested objects included', () => {
    const c = loadConfig(valid);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.webhook)).toBe(true);
  });

  it('refuses WEBHOOK_ALLOW_PRIVATE_TARGETS=true with NODE_ENV=production, naming it', () => {
    const err = failure({
      ...valid,
      NODE_ENV: 'production',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    expect(err.variable).toBe('WEBHOOK_ALLOW_PRIVATE_TARGETS');
    expect(err.message).toMatch(
      /^WEBHOOK_ALLOW_PRIVATE_TARGETS=true is refused with NODE_ENV=production: /,
    );
    expect(err.message).not.toContain('\n');
    // Both services read the setting, so both refuse to start.
    for (const command of ['api', 'worker'] as const) {
      expect(() =>
        loadConfigFor(command, {
          ...valid,
          NODE_ENV: 'production',
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        }),
      ).toThrow(ConfigError);
    }
    // Production without it, and development with it, start.
    expect(loadConfig({ ...valid, NODE_ENV: 'production' }).webhook.allowPrivateTargets).toBe(
      false,
    );
    expect(
      loadConfig({ ...valid, NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' })
        .webhook.allowPrivateTargets,
    ).toBe(false);
    expect(
      loadConfig({ ...valid, NODE_ENV: 'development', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' })
        .webhook.allowPrivateTargets,
    ).toBe(true);
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
    [{ REDIS_CLUSTER_NODES: '10.0.0.1:6379' }, 'REDIS_CLUSTER_NODES', 'redis://host:port'],
    [
      { REDIS_CLUSTER_NODES: 'redis://a:7000,redis://b:7000', REDIS_URL: 'redis://c:6379' },
      'REDIS_CLUSTER_NODES',
      'not both',
    ],
    [{ REDIS_CLUSTER_NODES: 'redis://a:7000/2' }, 'REDIS_CLUSTER_NODES', 'database 0 only'],
    [{ REDIS_SENTINELS: 'a:26379' }, 'REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_NAME is missing'],
    [{ REDIS_SENTINEL_NAME: 'mymaster' }, 'REDIS_SENTINELS', 'REDIS_SENTINELS is missing'],
    [
      { REDIS_SENTINELS: 'redis://a:26379', REDIS_SENTINEL_NAME: 'mymaster' },
      'REDIS_SENTINELS',
      'REDIS_SENTINELS is invalid: expected a comma-separated list of host:port',
    ],
    [
      { REDIS_SENTINELS: 'a:26379,b', REDIS_SENTINEL_NAME: 'mymaster' },
      'REDIS_SENTINELS',
      'REDIS_SENTINELS is invalid',
    ],
    [
      { REDIS_SENTINELS: 'a:0', REDIS_SENTINEL_NAME: 'mymaster' },
      'REDIS_SENTINELS',
      'host:port addresses (a:0 is not one)',
    ],
    [
      { REDIS_SENTINELS: 'a:26379', REDIS_SENTINEL_NAME: 'my master' },
      'REDIS_SENTINEL_NAME',
      'REDIS_SENTINEL_NAME is invalid',
    ],
    [
      {
        REDIS_SENTINELS: 'a:26379',
        REDIS_SENTINEL_NAME: 'mymaster',
        REDIS_CLUSTER_NODES: 'redis://b:7000',
        REDIS_URL: '',
      },
      'REDIS_SENTINELS',
      'not both',
    ],
    [
      { REDIS_CLUSTER_NODES: 'redis://:pw@a:7000,redis://b:7000' },
      'REDIS_CLUSTER_NODES',
      'one user name and password',
    ],
    [
      { REDIS_CLUSTER_NODES: 'redis://a:7000', QUEUE_PREFIX: 'sb' },
      'QUEUE_PREFIX',
      'a hash tag such as {sb}',
    ],
    [{ REDIS_CLUSTER_NODES: 'redis://a:7000', QUEUE_PREFIX: '{}sb' }, 'QUEUE_PREFIX', 'a hash tag'],
    [
      { QUEUE_DASHBOARD_ENABLED: 'true' },
      'QUEUE_DASHBOARD_TOKEN',
      'QUEUE_DASHBOARD_TOKEN is missing: expected a string of 16+ characters',
    ],
    [
      { QUEUE_DASHBOARD_ENABLED: 'true', QUEUE_DASHBOARD_TOKEN: 'short' },
      'QUEUE_DASHBOARD_TOKEN',
      'QUEUE_DASHBOARD_TOKEN is invalid',
    ],
    [{ QUEUE_DASHBOARD_ENABLED: 'yes' }, 'QUEUE_DASHBOARD_ENABLED', 'expected true or false'],
  ])('names the bad variable %j', (patch, variable, message) => {
    const env = { ...valid, ...patch } as Record<string, string>;
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
    const err = failure(env);
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(message);
    expect(err.message).not.toContain('\n');
  });

  it('reads a Redis Cluster from its seeds', () => {
    const c = loadConfig({
      ...valid,
      REDIS_CLUSTER_NODES: 'redis://10.0.0.1:7000,redis://10.0.0.2:7000',
      REDIS_URL: '',
    });
    expect(c.redis).toEqual({
      mode: 'cluster',
      nodes: ['redis://10.0.0.1:7000', 'redis://10.0.0.2:7000'],
    });
    expect(Object.isFrozen(c.redis)).toBe(true);
  });

  it('reads Sentinels and the primary name; REDIS_URL gives credentials and database', () => {
    const c = loadConfig({
      ...valid,
      REDIS_SENTINELS: '10.0.0.1:26379,sentinel-b:26380,[::1]:26381',
      REDIS_SENTINEL_NAME: 'mymaster',
      REDIS_URL: 'redis://:secret@ignored:6379/2',
    });
    expect(c.redis).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-b', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      name: 'mymaster',
      url: 'redis://:secret@ignored:6379/2',
    });
    expect(Object.isFrozen(c.redis)).toBe(true);
    // No hash tag needed: one primary holds every key.
    const plain = loadConfig({
      ...valid,
      REDIS_SENTINELS: 'a:26379',
      REDIS_SENTINEL_NAME: 'mymaster',
      QUEUE_PREFIX: 'sb',
    });
    expect(plain.redis).toMatchObject({ mode: 'sentinel', url: 'redis://127.0.0.1:6379' });
  });

  it('turns the queue dashboard on only with its token', () => {
    const token = 'dashboard-token-0123456789';
    expect(loadConfig({ ...valid, QUEUE_DASHBOARD_TOKEN: token }).queueDashboard).toBeNull();
    expect(
      loadConfig({ ...valid, QUEUE_DASHBOARD_ENABLED: 'true', QUEUE_DASHBOARD_TOKEN: token })
        .queueDashboard,
    ).toEqual({ token });
  });

  it('treats an empty value as unset', () => {
    expect(loadConfig({ ...valid, PORT: '' }).port).toBe(3000);
  });
});

const failureFor = (command: 'api' | 'worker' | 'operator', env: Record<string, string>) => {
  try {
    loadConfigFor(command, env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfigFor: a command is asked only for the settings it uses', () => {
  it('operator commands (migrate, CLI) need no secrets at all', () => {
    const c = loadConfigFor('operator', {});
    expect(c).toEqual({ databaseUrl: 'postgres://postgres@127.0.0.1:5432/switchboard' });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('operator commands ignore variables they do not use, even invalid ones', () => {
    const c = loadConfigFor('operator', { PORT: 'eighty', DATABASE_URL: 'postgres://db/x' });
    expect(c.databaseUrl).toBe('postgres://db/x');
  });

  it('operator commands still refuse a bad DATABASE_URL', () => {
    expect(failureFor('operator', { DATABASE_URL: 'mysql://x' }).variable).toBe('DATABASE_URL');
  });

  it('the worker needs SECRET_ENCRYPTION_KEY but not INGEST_TOKEN or CURSOR_SECRET', () => {
    const key = valid.SECRET_ENCRYPTION_KEY;
    const c = loadConfigFor('worker', { SECRET_ENCRYPTION_KEY: key, METRICS_HOST: '0.0.0.0' });
    expect(c.metricsHost).toBe('0.0.0.0');
    expect(c.secretEncryptionKey).toHaveLength(32);
    expect('ingestToken' in c).toBe(false);
    expect(failureFor('worker', {}).variable).toBe('SECRET_ENCRYPTION_KEY');
  });

  it('the API needs its three secrets', () => {
    expect(loadConfigFor('api', valid).ingestToken).toBe(valid.INGEST_TOKEN);
    const { INGEST_TOKEN: _omitted, ...rest } = valid;
    expect(failureFor('api', rest).message).toBe(
      'INGEST_TOKEN is missing: expected a string of 16+ characters',
    );
  });

  it('the API has its own metrics port and keep-alive timeouts above load balancers', () => {
    const c = loadConfigFor('api', valid);
    expect(c.apiMetricsPort).toBe(9465);
    expect(c.metricsHost).toBe('127.0.0.1');
    expect(c.http).toEqual({
      keepAliveTimeoutMs: 65_000,
      headersTimeoutMs: 66_000,
      maxConnectionsPerAddress: 256,
    });
    const tuned = {
      ...valid,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '120000',
      HTTP_HEADERS_TIMEOUT_MS: '121000',
    };
    expect(loadConfigFor('api', tuned).http.keepAliveTimeoutMs).toBe(120_000);
    const short = { ...valid, HTTP_KEEP_ALIVE_TIMEOUT_MS: '70000' };
    expect(failureFor('api', short).variable).toBe('HTTP_HEADERS_TIMEOUT_MS');
  });

  it('SMS_CARRIER_SIGNING_SECRET: none by default, one, or two while one replaces the other', () => {
    const secrets = (value?: string) =>
      loadConfigFor('api', { ...valid, ...(value ? { SMS_CARRIER_SIGNING_SECRET: value } : {}) })
        .carrierSigningSecrets;
    const [a, b] = ['a'.repeat(32), 'b'.repeat(40)];
    expect(secrets()).toEqual([]);
    expect(secrets(a)).toEqual([a]);
    expect(secrets(`${b},${a}`)).toEqual([b, a]);
    for (const bad of ['short', `${a},`, `${a},${b},${a}`, `${a} x`]) {
      const failure = failureFor('api', { ...valid, SMS_CARRIER_SIGNING_SECRET: bad });
      expect(failure.variable).toBe('SMS_CARRIER_SIGNING_SECRET');
    }
  });

  it('caps connections per client address: API_MAX_CONNECTIONS_PER_IP, 0 for none', () => {
    const cap = (value: string) =>
      loadConfigFor('api', { ...valid, API_MAX_CONNECTIONS_PER_IP: value }).http
        .maxConnectionsPerAddress;
    expect(cap('0')).toBe(0);
    expect(cap('1000')).toBe(1000);
    for (const bad of ['-1', '1.5', 'many']) {
      const failure = failureFor('api', { ...valid, API_MAX_CONNECTIONS_PER_IP: bad });
      expect(failure.variable).toBe('API_MAX_CONNECTIONS_PER_IP');
    }
  });
});

describe('withDotEnv', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sb-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads .env when present; the environment wins, an empty value included', () => {
    writeFileSync(
      join(dir, '.env'),
      '# comment\nINGEST_TOKEN=from-dot-env-0123456789\nPORT=4000\nLOG_LEVEL="debug"\n',
    );
    const env = withDotEnv({ PORT: '5000', LOG_LEVEL: '' }, dir);
    expect(env.INGEST_TOKEN).toBe('from-dot-env-0123456789');
    expect(env.PORT).toBe('5000');
    expect(env.LOG_LEVEL).toBe('');
  });

  it('is the environment alone when there is no .env', () => {
    expect(withDotEnv({ PORT: '5000' }, dir)).toEqual({ PORT: '5000' });
  });
});
