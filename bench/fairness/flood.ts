import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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
  flood: {
    requests: number;
    byStatus: Record<string, number>;
    byKind: Record<string, number>;
    seconds: number;
    perSecond: number;
    /** The flooder's own CPU time. */
    cpuMs: number;
  };
  /** The API process's CPU time during the flood, less A's own cost measured alone. */
  apiCpuMs: number;
  apiCpuMsPerFloodRequest: number;
  flooderCpuMsPerRequest: number;
}

/**
 * (c) A bogus-key flood: the real API as a child process (default limits before
 * authentication; the valid key's own limit far above the load), tenant A reading
 * `GET /api/v1/usage` one request at a time, `samples` times alone and `samples` times while
 * a flooder process (./flooder.ts) sends, over `connections` connections, requests with
 * made-up keys, no key and wrong ingestion tokens, as fast as they are answered (or paced to
 * `rate` a second in all), in `rounds` rounds of A alone then A beside the flood. A's p95
 * during the flood is compared with its p95 alone; the API's CPU time per flood request (A's
 * own cost, measured alone, taken off) and the flooder's are reported beside it.
 */
export async function runFlood(
  knex: Knex,
  env: { benchUrl: string; prefix: string; encryptionKey: string },
  opts: { samples: number; rounds: number; connections: number; rate?: number },
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
    const measure = async (n: number): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push(await read());
      return out;
    };
    for (let i = 0; i < 20; i++) await read(); // warm-up

    // Rounds of A alone, then A beside the flood, so that the machine's other load (it
    // changes by the second) weighs on both alike. The flood comes from a process of its
    // own (./flooder.ts), as an attacker's would.
    const baseline: number[] = [];
    const duringFlood: number[] = [];
    const floods: Array<FloodResult['flood']> = [];
    let aloneCpuMs = 0;
    let floodCpuMs = 0;
    const perRound = Math.ceil(opts.samples / opts.rounds);
    for (let r = 0; r < opts.rounds; r++) {
      let cpu = groupCpuMs(api);
      baseline.push(...(await measure(perRound)));
      aloneCpuMs += groupCpuMs(api) - cpu;
      cpu = groupCpuMs(api);
      const flooder = startTsChild('flooder', 'bench/fairness/flooder.ts', {
        ...process.env,
        FLOOD_URL: base,
        FLOOD_CONNECTIONS: String(opts.connections),
        FLOOD_RATE: String(opts.rate ?? 0),
      });
      let out = '';
      flooder.proc.stdout?.on('data', (c: Buffer) => {
        out += c.toString('utf8');
      });
      await sleep(1000); // the flood is on, its burst spent
      duringFlood.push(...(await measure(perRound)));
      await flooder.stop();
      floodCpuMs += groupCpuMs(api) - cpu;
      const line = out.trim().split('\n').pop() ?? '';
      if (!line.startsWith('{')) throw new Error(`the flooder said no result:\n${flooder.tail()}`);
      floods.push(JSON.parse(line) as FloodResult['flood']);
    }
    const flood = mergeFloods(floods);
    // The API's CPU during the flood, less what A's own requests cost it when alone.
    const apiCpuMs = Math.max(0, floodCpuMs - aloneCpuMs);
    const b = summarize(baseline);
    const d = summarize(duringFlood);
    return {
      baseline: b,
      duringFlood: d,
      p95: { alone: round(p95(baseline)), duringFlood: round(p95(duringFlood)) },
      ratioP95: Number((p95(duringFlood) / p95(baseline)).toFixed(2)),
      flood,
      apiCpuMs,
      apiCpuMsPerFloodRequest: Number((apiCpuMs / Math.max(1, flood.requests)).toFixed(3)),
      flooderCpuMsPerRequest: Number((flood.cpuMs / Math.max(1, flood.requests)).toFixed(3)),
    };
  } finally {
    await api.stop();
  }
}

const round = (n: number): number => Number(n.toFixed(1));

/** The rounds' floods as one: counts added, the rate over their seconds. */
function mergeFloods(floods: ReadonlyArray<FloodResult['flood']>): FloodResult['flood'] {
  const add = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
    return into;
  };
  const requests = floods.reduce((n, f) => n + f.requests, 0);
  const seconds = floods.reduce((n, f) => n + f.seconds, 0);
  return {
    requests,
    byStatus: floods.reduce((m, f) => add(m, f.byStatus), {}),
    byKind: floods.reduce((m, f) => add(m, f.byKind), {}),
    seconds: Number(seconds.toFixed(2)),
    perSecond: Math.round(requests / Math.max(seconds, 0.001)),
    cpuMs: floods.reduce((n, f) => n + f.cpuMs, 0),
  };
}

function p95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)] as number;
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU milliseconds (user + system) used so far by the processes of a child's group (tsx
 * and the script it runs), from /proc (Linux; 0 elsewhere).
 */
function groupCpuMs(child: Child): number {
  const group = child.proc.pid;
  if (group === undefined) return 0;
  let ticks = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After the command's closing parenthesis: state ppid pgrp … utime(14) stime(15).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== group) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone meanwhile.
    }
  }
  return Math.round((ticks * 1000) / CLOCK_TICKS);
}
