import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { ApiKeysStore, TenantsStore, type Knex } from '@switchboard/db';
import { startTsChild, waitForHttp, type Child } from '../lib/children';
import { freePort, httpGet } from '../lib/http';
import { sleep } from '../lib/progress';
import { summarize, type LatencySummary } from '../lib/stats';

export interface FloodResult {
  baseline: LatencySummary;
  duringFlood: LatencySummary;
  p95: { alone: number; duringFlood: number };
  ratioP95: number;
  flood: { requests: number; byStatus: Record<string, number>; perSecond: number };
}

/**
 * (c) A bogus-key flood: the real API as a child process (default limits before
 * authentication; the valid key's own limit far above the load), tenant A reading
 * `GET /api/v1/usage` one request at a time, `samples` times alone and `samples` times while
 * `connections` clients send requests with made-up keys (a new one each time) as fast as
 * they are answered. A's p95 during the flood is compared with its p95 alone.
 */
export async function runFlood(
  knex: Knex,
  env: { benchUrl: string; prefix: string; encryptionKey: string },
  opts: { samples: number; connections: number; rate?: number },
): Promise<FloodResult> {
  const tenant = await new TenantsStore(knex).create({ name: 'A (flood)' });
  const { key } = await new ApiKeysStore(knex).create({ tenantId: tenant.id, scopes: ['read'] });
  const port = await freePort();
  const api: Child = startTsChild('api', 'apps/api/src/server.ts', {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: env.benchUrl,
    QUEUE_PREFIX: env.prefix,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    INGEST_TOKEN: randomBytes(24).toString('hex'),
    CURSOR_SECRET: randomBytes(24).toString('hex'),
    SECRET_ENCRYPTION_KEY: env.encryptionKey,
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(api, `${base}/healthz`);
    const read = async (): Promise<number> => {
      const started = performance.now();
      const res = await httpGet(`${base}/api/v1/usage`, { authorization: `Bearer ${key}` });
      if (res.status !== 200) throw new Error(`GET /usage answered ${res.status}: ${res.body}`);
      return performance.now() - started;
    };
    const measure = async (): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < opts.samples; i++) out.push(await read());
      return out;
    };
    for (let i = 0; i < 20; i++) await read(); // warm-up
    const baseline = await measure();

    const agent = new Agent({ keepAlive: true, maxSockets: opts.connections });
    const byStatus: Record<string, number> = {};
    let stop = false;
    let sent = 0;
    const bogus = (): Promise<void> =>
      new Promise((resolve) => {
        const req = request(
          `${base}/api/v1/usage`,
          {
            agent,
            headers: { authorization: `Bearer sk_live_${randomBytes(24).toString('hex')}` },
          },
          (res) => {
            res.resume();
            res.on('end', () => {
              byStatus[String(res.statusCode)] = (byStatus[String(res.statusCode)] ?? 0) + 1;
              resolve();
            });
          },
        );
        req.on('error', () => {
          byStatus.error = (byStatus.error ?? 0) + 1;
          resolve();
        });
        req.end();
      });
    const floodStart = performance.now();
    // Each client sends as fast as it is answered, or paced to its share of `rate`.
    const interval = opts.rate ? (opts.connections * 1000) / opts.rate : 0;
    const loops = Array.from({ length: opts.connections }, async (_, i) => {
      let due = performance.now() + (interval * i) / opts.connections;
      while (!stop) {
        if (interval) {
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          due += interval;
        }
        sent++;
        await bogus();
      }
    });
    await sleep(1000); // the flood is on, its burst spent
    const duringFlood = await measure();
    stop = true;
    await Promise.all(loops);
    const floodSeconds = (performance.now() - floodStart) / 1000;
    agent.destroy();
    const b = summarize(baseline);
    const d = summarize(duringFlood);
    return {
      baseline: b,
      duringFlood: d,
      p95: { alone: round(p95(baseline)), duringFlood: round(p95(duringFlood)) },
      ratioP95: Number((p95(duringFlood) / p95(baseline)).toFixed(2)),
      flood: { requests: sent, byStatus, perSecond: Math.round(sent / floodSeconds) },
    };
  } finally {
    await api.stop();
  }
}

const round = (n: number): number => Number(n.toFixed(1));

function p95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)] as number;
}
