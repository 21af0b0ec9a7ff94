import { ConfigError } from './errors';

/**
 * Where this deployment's Redis is: one server (`REDIS_URL`), or a Redis Cluster reached
 * through a few seed nodes (`REDIS_CLUSTER_NODES`; the client discovers the rest). The seeds
 * are kept as given so a process can hand the same target to a child process.
 */
export type RedisTarget =
  | { readonly mode: 'standalone'; readonly url: string }
  | { readonly mode: 'cluster'; readonly nodes: readonly string[] };

/**
 * A prefix whose keys all hash to one Redis Cluster slot: Redis hashes only what lies between
 * a key's first `{` and the first `}` after it, when that is not empty. Every key is
 * `${prefix}:…` and the prefix has no ':', so the tag must close inside the prefix.
 */
export const hasHashTag = (prefix: string): boolean => /^[^{]*\{[^}]+\}/.test(prefix);

const invalid = (variable: string, expected: string): ConfigError =>
  new ConfigError(variable, `${variable} is invalid: expected ${expected}`);

/**
 * The Redis target from the raw variables (REDIS_URL already defaulted; `urlWasSet` tells
 * whether the operator set it). A cluster needs a hash-tagged QUEUE_PREFIX: BullMQ's scripts
 * and the idempotency script touch several keys at once, which a cluster allows only on one
 * slot.
 */
export function redisTarget(
  url: string,
  urlWasSet: boolean,
  clusterNodes: string | undefined,
  queuePrefix: string,
): RedisTarget {
  if (clusterNodes === undefined) return { mode: 'standalone', url };
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
