import { randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import type { Express } from 'express';
import { loadConfig, type Config } from '@switchboard/config';
import type { Scope } from '@switchboard/db';
import {
  closeQueues,
  createQueues,
  createRedis,
  eachMaster,
  type Queues,
  type Redis,
} from '@switchboard/queues';
import { createApi, createDeps, type Deps } from '../../apps/api/src/app';
import type { DepsOverrides } from '../../apps/api/src/deps';
import { createTestDatabase } from './database';
import { testEnv } from './env';

export interface TestContext {
  config: Config;
  deps: Deps;
  /** The Express app (routes, middleware, error handler). */
  app: Express;
  /**
   * What the API's HTTP server runs (server.ts): the early refusal of addresses over their
   * limit, then `app`. Drive it (supertest, `createServer`) to test that refusal.
   */
  listener: RequestListener;
  /**
   * The test's own producers, on a connection with no command timeout: what a test adds or
   * reads in the queues waits for a busy Redis, where the API's producers (`deps.queues`)
   * give up after 2 s as a request must. Made on first use.
   */
  queues: Queues;
  /** The connection of `queues`, for a test's own commands (the same reason). */
  redis: Redis;
  /** Creates a tenant and a key with the given scopes; returns the bearer header too. */
  tenant(scopes?: Scope[]): Promise<{ tenantId: string; key: string; auth: string }>;
  keyFor(tenantId: string, scopes: Scope[]): Promise<{ id: string; auth: string }>;
  close(): Promise<void>;
}

/**
 * One test file's world: its own database (a clone of the migrated template), its own Redis
 * key prefix, and the real API app built by the same composition root as production.
 * `overrides` are createDeps' test seams (a logger to capture, a resolver, trusted CAs).
 * A test that brings its own `DATABASE_URL` (e.g. a private cluster for fault tests, see
 * private-postgres.ts) gets no database on the shared server.
 */
export async function createTestContext(
  env: Record<string, string> = {},
  overrides: DepsOverrides = {},
): Promise<TestContext> {
  const db = env.DATABASE_URL ? null : await createTestDatabase();
  const prefix = `{sbt${randomBytes(4).toString('hex')}}`;
  const config = loadConfig(testEnv({ DATABASE_URL: db?.url ?? '', QUEUE_PREFIX: prefix, ...env }));
  const deps = createDeps(config, overrides);
  await redisSettled(deps);
  const { app, listener } = createApi(deps);
  const keyFor = async (tenantId: string, scopes: Scope[]) => {
    const { apiKey, key } = await deps.stores.apiKeys.create({ tenantId, scopes });
    return { id: apiKey.id, auth: `Bearer ${key}` };
  };
  let own: { redis: Redis; queues: Queues } | null = null;
  const ownConnection = () => {
    if (!own) {
      const redis = createRedis(config.redis, 'worker');
      own = { redis, queues: createQueues(redis, config.queuePrefix) };
    }
    return own;
  };
  return {
    config,
    deps,
    app,
    listener,
    get queues() {
      return ownConnection().queues;
    },
    get redis() {
      return ownConnection().redis;
    },
    keyFor,
    async tenant(scopes = ['admin']) {
      const t = await deps.stores.tenants.create({
        name: `Tenant ${randomBytes(3).toString('hex')}`,
      });
      const { auth } = await keyFor(t.id, scopes);
      return { tenantId: t.id, key: auth.slice('Bearer '.length), auth };
    },
    async close() {
      await deleteRedisKeys(deps, config.queuePrefix);
      if (own) await closeQueues(own.queues, own.redis);
      await deps.close();
    },
  };
}

/**
 * SCAN carries no key, so on a cluster it runs on each master (each lists only its own
 * keys) and the keys are deleted on the master that listed them.
 */
async function deleteRedisKeys(deps: Deps, prefix: string): Promise<void> {
  // A test that points at an unreachable Redis wrote nothing there; a command would wait
  // through the client's retries before failing (about 20 s).
  if (deps.redis.status !== 'ready') return;
  try {
    for (const node of eachMaster(deps.redis)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        if (keys.length) await node.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  } catch {
    // Redis may be deliberately unreachable in a test; nothing to clean then.
  }
}

/**
 * Waits (at most 5 s) until the API's Redis connection is up or has failed once. The
 * producer connection fails fast while it is connecting, so without this the first keyed
 * request of a file could get a 503 on a loaded machine; a test that points at an
 * unreachable Redis goes on at its first refused connection.
 */
async function redisSettled(deps: Deps): Promise<void> {
  if (deps.redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      deps.redis.off('ready', done).off('error', done);
      resolve();
    };
    const timer = setTimeout(done, 5000);
    deps.redis.once('ready', done).once('error', done);
  });
}
