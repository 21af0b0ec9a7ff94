import IORedis, {
  Cluster,
  type ClusterOptions,
  type Redis as RedisServer,
  type RedisOptions,
} from 'ioredis';
import type { RedisTarget } from '@switchboard/config';

/**
 * A connection to this deployment's Redis: one server (possibly the primary that Redis
 * Sentinel names, see `createRedis`), or a Redis Cluster. Everything the
 * product runs on it (BullMQ, idempotency entries) uses keys under the hash-tagged
 * QUEUE_PREFIX, so on a cluster every key and every multi-key script lands on one slot.
 * Commands that carry no key (PING, INFO, SCAN) go to an arbitrary node of a cluster: use
 * `probeRedis` for a readiness check and `eachMaster` to scan.
 */
export type Redis = RedisServer | Cluster;

type Role = 'worker' | 'producer';

/** Reconnect forever with a capped backoff; the role decides what callers see meanwhile. */
const retry = (times: number): number => Math.min(times * 200, 2000);

/**
 * How long a request path waits for one Redis operation (an idempotency command, a job add,
 * the readiness probe) before it answers without it: a frozen Redis (SIGSTOP, a stuck
 * server) keeps the connection, so only a deadline bounds the wait. Chosen with the API's
 * rate-limit deadline (REDIS_DEADLINE_MS, 300 ms): a keyed write waits for both at most,
 * 800 ms, and is answered within 1 s. The connection's own command timeout stays at 2 s, a
 * backstop for everything else (setup, operator tools, a loaded machine).
 */
export const REQUEST_REDIS_TIMEOUT_MS = 500;

/**
 * `op`'s result, or a rejection after `ms` (the operation itself goes on: callers make a late
 * success harmless). The timer never holds the process open.
 *
 * The deadline judges the server, not this process: when the timer fires, the rejection
 * waits one turn of the event loop (setImmediate runs after the poll phase), so an answer
 * that arrived while this process was stalled (a busy machine, a long synchronous task) is
 * read and wins. A server that has not answered is still refused at `ms` plus that turn.
 */
export async function withinMs<T>(ms: number, op: PromiseLike<T>, what: string): Promise<T> {
  // Adopted once: a thenable such as a knex query runs each time its `then` is called.
  const p = Promise.resolve(op);
  p.catch(() => undefined); // a late failure is nobody's
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const refuse = () => reject(new Error(`${what}: no answer within ${ms} ms`));
    timer = setTimeout(() => setImmediate(refuse), ms);
    timer.unref();
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Per-connection settings of each role, the BullMQ production settings:
 * - `worker`: blocking commands must wait out an outage, so `maxRetriesPerRequest: null` and
 *   an offline queue (BullMQ requires both for workers);
 * - `producer`: used on request paths (the API), fails fast when Redis is down
 *   (`enableOfflineQueue: false`, one retry, short command timeout) so a request becomes a
 *   503 instead of a hang.
 */
const roleOptions = (role: Role): RedisOptions =>
  role === 'worker'
    ? { connectionName: 'switchboard-worker', maxRetriesPerRequest: null }
    : {
        connectionName: 'switchboard-producer',
        maxRetriesPerRequest: 1,
        commandTimeout: 2000,
        connectTimeout: 2000,
      };

/**
 * Opens a connection for `role` to a Redis URL or to the configured target. On a cluster the
 * same role semantics hold: the per-node options carry the timeouts and BullMQ's
 * `maxRetriesPerRequest: null` (BullMQ checks it there), while the offline queue is a
 * cluster-level option (ioredis always queues inside a node connection while the cluster
 * routes, so the cluster-level switch is the one that makes a producer fail fast).
 */
export function createRedis(target: RedisTarget | string, role: Role): Redis {
  const t: RedisTarget = typeof target === 'string' ? { mode: 'standalone', url: target } : target;
  const redis =
    t.mode === 'cluster'
      ? createCluster(t.nodes, role)
      : t.mode === 'sentinel'
        ? createSentinelClient(t, role)
        : createServer(t.url, role);
  // An 'error' listener is mandatory: without it ioredis would crash the process on an outage.
  redis.on('error', () => undefined);
  return redis;
}

function createServer(url: string, role: Role): RedisServer {
  return new IORedis(url, {
    ...roleOptions(role),
    retryStrategy: retry,
    ...(role === 'worker' ? { enableReadyCheck: false } : { enableOfflineQueue: false }),
  });
}

/** The user, password and TLS of a redis:// or rediss:// URL, as ioredis options. */
function authOf(url: URL): RedisOptions {
  return {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** A READONLY reply: this connection reached a replica (a demoted primary after a failover). */
const isReadOnlyReply = (err: Error): boolean => err.message.startsWith('READONLY');

/**
 * A connection to the primary that the Sentinels name. Invariants: every (re)connect asks a
 * Sentinel for the primary's address first, so after a failover the next reconnect reaches
 * the promoted replica without a restart; the ready check stays on for both roles, because
 * it is where ioredis checks that the server it reached really is a primary (a Sentinel can
 * still name the old one for a moment); and a READONLY reply (a primary demoted to a replica
 * while the connection stayed open) makes the connection reconnect and resend the command,
 * so it reaches the new primary. The producer's other rules hold: no offline queue, so
 * while no primary is reachable a request fails at once (503).
 */
function createSentinelClient(
  target: Extract<RedisTarget, { mode: 'sentinel' }>,
  role: Role,
): RedisServer {
  const url = new URL(target.url);
  const db = Number(url.pathname.slice(1) || 0);
  return new IORedis({
    sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
    name: target.name,
    ...authOf(url),
    ...(url.protocol === 'rediss:' ? { enableTLSForSentinelMode: true } : {}),
    db,
    ...roleOptions(role),
    retryStrategy: retry,
    sentinelRetryStrategy: retry,
    // A Sentinel that holds the connection without answering must not stall the connect.
    sentinelCommandTimeout: 1000,
    enableReadyCheck: true,
    reconnectOnError: (err) => (isReadOnlyReply(err) ? 2 : false),
    ...(role === 'worker' ? {} : { enableOfflineQueue: false }),
  });
}

function createCluster(seeds: readonly string[], role: Role): Cluster {
  // Config guarantees every seed shares scheme and credentials; discovered nodes get them
  // through redisOptions (ioredis would not carry a seed URL's password over to them).
  const auth = authOf(new URL(seeds[0] ?? 'redis://127.0.0.1:6379'));
  const startupNodes = seeds.map((seed) => {
    const u = new URL(seed);
    return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 6379) };
  });
  const options: ClusterOptions = {
    redisOptions: { ...roleOptions(role), ...auth },
    clusterRetryStrategy: retry,
    // The ready check waits for `cluster_state:ok`, so 'ready' means slots are served.
    enableReadyCheck: true,
    enableOfflineQueue: role === 'worker',
    slotsRefreshTimeout: 2000,
  };
  return new Cluster(startupNodes, options);
}

export const isCluster = (redis: Redis): redis is Cluster => redis instanceof Cluster;

/**
 * One keyed round trip under the deployment's prefix: on a cluster it reaches the master
 * that owns the deployment's slot, which is the node that matters (a PING may be answered by
 * any node, also while that slot is down). On one server it is as cheap as a PING.
 */
export async function probeRedis(redis: Redis, prefix: string): Promise<void> {
  await redis.exists(`${prefix}:probe`);
}

/** The servers to run a keyless command on: every master of a cluster, or the one server. */
export const eachMaster = (redis: Redis): RedisServer[] =>
  isCluster(redis) ? redis.nodes('master') : [redis];

/** Closes gracefully when connected; otherwise stops reconnecting at once. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    await redis.quit().catch(() => undefined);
  }
  redis.disconnect(false);
}
