import { randomBytes } from 'node:crypto';
import type { RedisTarget } from '@switchboard/config';

/**
 * The server every test talks to. Tests never touch the service's own database: each test
 * file clones a migrated template into a database of its own (see context.ts).
 */
export const SERVER_URL =
  process.env.TEST_DATABASE_SERVER_URL ??
  serverOf(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard');
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function serverOf(url: string): string {
  const u = new URL(url);
  u.pathname = '/postgres';
  return u.toString();
}

export function databaseUrl(name: string): string {
  const u = new URL(SERVER_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Per-run names, so two runs on one machine never collide. */
export const runId = (): string => {
  process.env.SB_TEST_RUN_ID ??= randomBytes(4).toString('hex');
  return process.env.SB_TEST_RUN_ID;
};
export const templateName = (): string => `sbt_${runId()}_template`;

/** A complete, valid environment for loadConfig in tests. */
export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl(templateName()),
    REDIS_URL,
    INGEST_TOKEN: 'test-ingest-token-0123456789',
    CURSOR_SECRET: 'test-cursor-secret-0123456789',
    SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'silent',
    // Small pools: several test files, workers and API processes share one Postgres (100
    // connections by default), and a file lives shorter than a pool's default idle timeout:
    // its idle connections are closed after 1 s, not kept to its end.
    WORKER_CONCURRENCY: '8',
    DATABASE_POOL_IDLE_MS: '1000',
    ...overrides,
  };
}

/** The variables that name `target`, for a child process on the same Redis. */
export function redisEnv(target: RedisTarget): Record<string, string> {
  const none = { REDIS_CLUSTER_NODES: '', REDIS_SENTINELS: '', REDIS_SENTINEL_NAME: '' };
  switch (target.mode) {
    case 'cluster':
      return { ...none, REDIS_URL: '', REDIS_CLUSTER_NODES: target.nodes.join(',') };
    case 'sentinel':
      return {
        ...none,
        REDIS_URL: target.url,
        REDIS_SENTINELS: target.sentinels
          .map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`)
          .join(','),
        REDIS_SENTINEL_NAME: target.name,
      };
    case 'standalone':
      return { ...none, REDIS_URL: target.url };
  }
}
