import { ConfigError } from './errors';

/** One Sentinel's address. */
export interface SentinelAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Where this deployment's Redis is: one server (`REDIS_URL`), a Redis Cluster reached
 * through a few seed nodes (`REDIS_CLUSTER_NODES`; the client discovers the rest), or a
 * primary with replicas watched by Redis Sentinel (`REDIS_SENTINELS` and
 * `REDIS_SENTINEL_NAME`): the client asks the Sentinels which server is the primary on every
 * connect, so a failover needs no restart. In Sentinel mode `url` (REDIS_URL) gives the
 * scheme, user, password and database of the primary; its host and port are not used. The
 * cluster's seeds are kept as given so a process can hand the same target to a child process.
 */
export type RedisTarget =
  | { readonly mode: 'standalone'; readonly url: string }
  | { readonly mode: 'cluster'; readonly nodes: readonly string[] }
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly SentinelAddress[];
      readonly name: string;
      readonly url: string;
    };

/** The raw variables of the Redis target (REDIS_URL already defaulted). */
export interface RedisVariables {
  url: string;
  /** Whether the operator set REDIS_URL (rather than the schema defaulting it). */
  urlWasSet: boolean;
  clusterNodes: string | undefined;
  sentinels: string | undefined;
  sentinelName: string | undefined;
  queuePrefix: string;
}

/**
 * A prefix whose keys all hash to one Redis Cluster slot: Redis hashes only what lies between
 * a key's first `{` and the first `}` after it, when that is not empty. Every key is
 * `${prefix}:…` and the prefix has no ':', so the tag must close inside the prefix.
 */
export const hasHashTag = (prefix: string): boolean => /^[^{]*\{[^}]+\}/.test(prefix);

const invalid = (variable: string, expected: string): ConfigError =>
  new ConfigError(variable, `${variable} is invalid: expected ${expected}`);

/**
 * The Redis target from the raw variables. One of REDIS_URL alone, REDIS_CLUSTER_NODES, or
 * REDIS_SENTINELS with REDIS_SENTINEL_NAME (REDIS_URL may then carry credentials and a
 * database). A cluster needs a hash-tagged QUEUE_PREFIX: BullMQ's scripts and the
 * idempotency script touch several keys at once, which a cluster allows only on one slot.
 */
export function redisTarget(v: RedisVariables): RedisTarget {
  if (v.sentinels !== undefined || v.sentinelName !== undefined) return sentinelTarget(v);
  if (v.clusterNodes === undefined) return { mode: 'standalone', url: v.url };
  return clusterTarget(v.clusterNodes, v.urlWasSet, v.queuePrefix);
}

function sentinelTarget(v: RedisVariables): RedisTarget {
  const name = 'REDIS_SENTINELS';
  if (v.clusterNodes !== undefined)
    throw invalid(name, 'either REDIS_SENTINELS or REDIS_CLUSTER_NODES, not both');
  if (v.sentinels === undefined)
    throw new ConfigError(
      name,
      `${name} is missing: expected host:port addresses of Sentinels (required with REDIS_SENTINEL_NAME)`,
    );
  if (v.sentinelName === undefined)
    throw new ConfigError(
      'REDIS_SENTINEL_NAME',
      'REDIS_SENTINEL_NAME is missing: expected the name the Sentinels monitor the primary under (required with REDIS_SENTINELS)',
    );
  const sentinels = v.sentinels.split(',').map((address) => {
    // The port follows the last ':'; an IPv6 host is written in brackets ([::1]:26379).
    const colon = address.lastIndexOf(':');
    const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
    const port = Number(address.slice(colon + 1));
    if (!host || port < 1 || port > 65535)
      throw invalid(name, `host:port addresses (${address} is not one)`);
    return { host, port };
  });
  return { mode: 'sentinel', sentinels, name: v.sentinelName, url: v.url };
}

function clusterTarget(clusterNodes: string, urlWasSet: boolean, queuePrefix: string): RedisTarget {
  const name = 'REDIS_CLUSTER_NODES';
  if (urlWasSet)
    throw invalid(name, 'either REDIS_URL (one server) or REDIS_CLUSTER_NODES, not both');
  const nodes = clusterNodes.split(',');
  const seeds = nodes.map((node) => {
    let parsed: URL;
    try {
      parsed = new URL(node);
    } catch {
      throw invalid(name, `redis://host:port seeds (${node} is not a URL)`);
    }
    if (!parsed.hostname) throw invalid(name, `redis://host:port seeds (${node} has no host)`);
    if (!['', '/', '/0'].includes(parsed.pathname))
      throw invalid(name, 'seeds without a database index (a Redis Cluster has database 0 only)');
    return `${parsed.protocol}//${parsed.username}:${parsed.password}`;
  });
  if (new Set(seeds).size > 1)
    throw invalid(name, 'seeds that share one scheme and one user name and password');
  if (!hasHashTag(queuePrefix))
    throw invalid(
      'QUEUE_PREFIX',
      'a hash tag such as {sb} with REDIS_CLUSTER_NODES, so every key of the deployment is on one slot',
    );
  return { mode: 'cluster', nodes };
}
