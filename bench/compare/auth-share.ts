/**
 * Item 3 of issue 29 measured directly: the CPU that authentication's key lookup and rate
 * limit cost per request, as a share of the CPU of a page's own work, both run in this
 * process against the API's real stores and limiter (built by the API's composition root,
 * so whatever the checked-out API does is what is measured):
 *  - auth: ApiKeysStore.findActiveByKey + KeyRateLimits.apply, as the middleware runs them;
 *  - page: CallsStore.list of 20 calls + the API's rendering + JSON.stringify.
 * CPU = this process + the Postgres backends of the bench database + every redis-server
 * process (other users of the Redis count too: shown apart), from /proc, per operation.
 */
import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import { loadConfig } from '@switchboard/config';
import { createDeps } from '../../apps/api/src/deps';
import { renderCallListItem } from '../../apps/api/src/shared/call-render';
import { cpuDelta, cpuTable } from '../delivery/cpu';
import { progressBar, sleep } from '../lib/progress';
import type { CompareSetup } from './setup';

export interface ShareSide {
  ops: number;
  perSecond: number;
  /** CPU ms per operation. */
  cpu: { bench: number; postgres: number; redis: number };
}

export interface AuthShare {
  auth: ShareSide;
  page: ShareSide;
  /** (bench + postgres) of auth ÷ the same of page; and with Redis counted. */
  share: number;
  shareWithRedis: number;
}

const headersSink = { setHeader: () => undefined } as unknown as Response;

async function run(
  label: string,
  ops: number,
  concurrency: number,
  backendPids: () => Promise<number[]>,
  op: () => Promise<unknown>,
): Promise<ShareSide> {
  const bar = progressBar(label.padEnd(44), ops, 'ops');
  let started = 0;
  const t0 = cpuTable([]);
  const u0 = process.cpuUsage();
  const w0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < ops) {
        started += 1;
        await op();
        if (started % 100 === 0) bar.update(started);
      }
    }),
  );
  const wall = (performance.now() - w0) / 1000;
  const u1 = process.cpuUsage(u0);
  const t1 = cpuTable([]);
  bar.update(ops);
  bar.stop();
  const pids = new Set(await backendPids());
  const perOp = (seconds: number) => (seconds * 1000) / ops;
  return {
    ops,
    perSecond: ops / wall,
    cpu: {
      bench: perOp((u1.user + u1.system) / 1e6),
      postgres: perOp(cpuDelta(t0, t1, (pid) => pids.has(pid))),
      redis: perOp(cpuDelta(t0, t1, (_pid, comm) => comm === 'redis-server')),
    },
  };
}

export async function measureAuthShare(
  setup: CompareSetup,
  redisUrl: string,
  prefix: string,
  ops: number,
  concurrency: number,
): Promise<AuthShare> {
  const config = loadConfig({
    DATABASE_URL: setup.benchUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    INGEST_TOKEN: randomBytes(24).toString('hex'),
    CURSOR_SECRET: randomBytes(24).toString('hex'),
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    // The API's key cache is an operator's opt-in; A measures what the API runs with.
    ...(process.env.API_KEY_CACHE_ENABLED
      ? { API_KEY_CACHE_ENABLED: process.env.API_KEY_CACHE_ENABLED }
      : {}),
  });
  const deps = createDeps(config);
  try {
    // Ready: Redis connected (and, where the API has one, its change listener).
    for (let i = 0; i < 100 && deps.redis.status !== 'ready'; i++) await sleep(50);
    await sleep(500);
    const backendPids = async () => {
      const { rows } = (await deps.knex.raw(
        'SELECT pid FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()',
        [setup.dbName],
      )) as { rows: { pid: number }[] };
      return rows.map((r) => r.pid);
    };
    const { apiKeys, calls } = deps.stores;
    const auth = async () => {
      const key = await apiKeys.findActiveByKey(setup.apiKey);
      if (!key) throw new Error('the bench key is not active');
      await deps.keyRateLimits.apply(headersSink, key.id, key.rateLimit);
      apiKeys.touch(key.id).catch(() => undefined);
    };
    const page = async () => {
      const p = await calls.list(setup.tenantId, {}, { limit: 20 });
      return JSON.stringify({ calls: p.rows.map(renderCallListItem), next_cursor: null });
    };
    // Warm both (prepared statements, pool, caches), then measure page, auth, page, auth.
    for (let i = 0; i < 50; i++) await Promise.all([auth(), page()]);
    const pages: ShareSide[] = [];
    const auths: ShareSide[] = [];
    for (let round = 1; round <= 2; round++) {
      pages.push(await run(`auth share: page work #${round}`, ops, concurrency, backendPids, page));
      auths.push(
        await run(`auth share: key + limit #${round}`, ops, concurrency, backendPids, auth),
      );
    }
    const mean = (xs: ShareSide[]): ShareSide => ({
      ops: xs.reduce((n, x) => n + x.ops, 0),
      perSecond: xs.reduce((n, x) => n + x.perSecond, 0) / xs.length,
      cpu: {
        bench: xs.reduce((n, x) => n + x.cpu.bench, 0) / xs.length,
        postgres: xs.reduce((n, x) => n + x.cpu.postgres, 0) / xs.length,
        redis: xs.reduce((n, x) => n + x.cpu.redis, 0) / xs.length,
      },
    });
    const a = mean(auths);
    const p = mean(pages);
    return {
      auth: a,
      page: p,
      share: (a.cpu.bench + a.cpu.postgres) / (p.cpu.bench + p.cpu.postgres),
      shareWithRedis:
        (a.cpu.bench + a.cpu.postgres + a.cpu.redis) / (p.cpu.bench + p.cpu.postgres + p.cpu.redis),
    };
  } finally {
    await deps.close();
  }
}
