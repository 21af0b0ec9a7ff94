/**
 * Bench part (f) of `npm run bench:fairness` (issue 47): a flood from another loopback
 * address at the highest rate this machine generates, beside tenant A's reads.
 *
 * - The API as it ships (`npm run build`'s bundle under plain node; BENCH_FROM_SOURCES=1 for
 *   tsx), its default limits before authentication and connection cap, its default log
 *   level (BENCH_LOG_LEVEL to change it); A's own per-key limit lifted. A control beside
 *   it: ./control-server.ts, a bare Node server answering 429 at once.
 * - Tenant A reads `GET /api/v1/calls?limit=20` (a full page of its 200 calls) with a valid
 *   key from 127.0.0.1, open loop: `aRate` requests a second at fixed times whatever the
 *   answers do, each timed from the moment it was due to its last byte (a late answer delays
 *   no later request, so a stall is counted in full: no coordinated omission).
 * - The flooder (./loopback-flooder.ts, its own process, compiled like the API) sends
 *   bogus-key requests from 127.0.0.2 as fast as it can, on `keepAlive` keep-alive
 *   connections and `closing` connections of one request each.
 * - In each of `rounds` rounds, for the API and the control (their order alternating): A
 *   alone for `seconds`, then A while the flood goes to that target for `seconds` (after a
 *   ramp). A's reads always go to the API: against the control, the flood costs A only what
 *   it costs the machine; against the API, what it costs the machine and the product.
 *
 * CPU of each process during each window is read from /proc (cores = CPU seconds per
 * second). With `profile`, the API runs with its inspector on a port of 127.0.0.1 and is
 * profiled during the first window of the flood against it (nothing else: not its start-up,
 * not A alone); the profile is written beside the results and summarised. A profiled run
 * is a diagnosis: its latencies carry the profiler's cost.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Knex } from '@switchboard/db';
import { CallRowGenerator, COPY_COLUMNS } from '../calls/rows';
import { formatProfile, summarizeCpuProfile, type ProfileSummary } from '../delivery/cpuprofile';
import { ROOT, startTsChild, waitForHttp, type Child } from '../lib/children';
import { compileForBench, serviceEntry } from '../lib/compiled';
import { withClient } from '../lib/database';
import { UNLIMITED_API_RATE } from '../lib/env';
import { freePort } from '../lib/http';
import { cpuSnapshot } from '../lib/proc';
import { log, sleep } from '../lib/progress';
import { median, percentile } from '../lib/stats';
import { createWriteTenant } from '../lib/tenant';

const FLOODER = 'bench/fairness/loopback-flooder.ts';
const CONTROL = 'bench/fairness/control-server.ts';
const A_ADDRESS = '127.0.0.1';
const FLOOD_ADDRESS = '127.0.0.2';
const A_PATH = '/api/v1/calls?limit=20';
const A_CALLS = 200;
/** The flood runs this long before A is measured beside it (its connections opened, the
 * address's burst spent). */
const RAMP_MS = 1500;
/** Between windows: the flood's connections gone, the API idle again. */
const SETTLE_MS = 1000;
const A_TIMEOUT_MS = 10_000;
const DAY_MS = 86_400_000;

export interface LoopbackOptions {
  /** A's requests a second. */
  aRate: number;
  /** Connections A may use at once (open loop: a slow answer takes another). */
  aSockets: number;
  /** Each measured window. */
  seconds: number;
  rounds: number;
  /** The flooder's keep-alive connections, and its connections of one request each. */
  keepAlive: number;
  closing: number;
  /** Flooder processes (each with `keepAlive` + `closing` connections). */
  flooders: number;
  profile: boolean;
}

type Target = 'api' | 'control';

export interface Percentiles {
  samples: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface FloodTotals {
  seconds: number;
  sent: number;
  byStatus: Record<string, number>;
  opened: number;
  connected: number;
  closedAfterAnswer: number;
  closedWithoutAnswer: number;
  reset: number;
  connectErrors: Record<string, number>;
  cpuMs: number;
}

export interface WindowResult {
  round: number;
  target: Target;
  flooded: boolean;
  a: Percentiles;
  /** A's requests that did not answer 200 (by status, or `error`). */
  aFailed: Record<string, number>;
  flood?: FloodTotals & { perSecond: number };
  /** Cores used during the window (CPU seconds a second). */
  cores: { api: number; control: number; flooder: number; postgres: number; bench: number };
  load: number[];
}

export interface TargetResult {
  target: Target;
  quiet: Percentiles;
  flooded: Percentiles;
  ratioP95: number;
  /** p95 flooded ÷ p95 alone, round by round. */
  ratioP95ByRound: number[];
  /** Their median: less swayed than the pooled ratio by one round's burst of other work. */
  ratioP95Median: number;
  flood: {
    requests: number;
    perSecond: number;
    answered: number;
    byStatus: Record<string, number>;
    /** Of the answers, 429s. */
    share429: number;
    /** Of the answers, those after which the server closed the connection. */
    shareClosedAfterAnswer: number;
    connectionsOpened: number;
    /** Connections reset by the server (the per-address cap), and connect() failures. */
    reset: number;
    connectErrors: Record<string, number>;
    flooderCores: number;
  };
  /** Mean cores of the target process while flooded, and while A alone. */
  targetCoresFlooded: number;
  apiCoresQuiet: number;
  /**
   * The target's CPU milliseconds per flood request: the API's less A's own (its cores
   * alone), the control's all of it. Far less swayed by the machine's other load than
   * latencies.
   */
  cpuMsPerFloodRequest: number;
}

export interface LoopbackResult {
  options: LoopbackOptions;
  aAddress: string;
  floodAddress: string;
  aPath: string;
  windows: WindowResult[];
  api: TargetResult;
  control: TargetResult;
  profile?: ProfileSummary;
}

/** The V8 profiler of a process whose inspector listens on 127.0.0.1:`port`. */
async function inspectorProfiler(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error('the API offers no inspector target');
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error('no inspector connection')), {
      once: true,
    });
  });
  let nextId = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  ws.addEventListener('message', (ev: MessageEvent) => {
    const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
  });
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++nextId;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send('Profiler.enable');
  return {
    start: () => send('Profiler.start'),
    stop: async () => ((await send('Profiler.stop')) as { profile: unknown }).profile,
    close: () => ws.close(),
  };
}

const round1 = (n: number): number => Number(n.toFixed(1));
const round2 = (n: number): number => Number(n.toFixed(2));

function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((x, y) => x - y);
  return {
    samples: sorted.length,
    p50: round1(percentile(sorted, 50)),
    p95: round1(percentile(sorted, 95)),
    p99: round1(percentile(sorted, 99)),
    max: round1(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

/** Tenant A: a read key (its per-key limit lifted) and A_CALLS calls, so a page is full. */
async function seedTenantA(knex: Knex, benchUrl: string): Promise<string> {
  const a = await createWriteTenant(knex, 'A (loopback flood)', 'loopback flood bench');
  const gen = new CallRowGenerator(
    [{ id: a.tenantId, calls: A_CALLS, receptionists: [{ id: a.receptionistId, phone: a.phone }] }],
    { seed: 20261204, startMs: Date.now() - 8 * DAY_MS, spanMs: 7 * DAY_MS },
  );
  function* lines(): Generator<string> {
    for (let line = gen.next(); line !== null; line = gen.next()) yield line;
  }
  await withClient(benchUrl, async (c) => {
    await pipeline(
      Readable.from(lines(), { objectMode: false }),
      c.query(copyFrom(`COPY calls (${COPY_COLUMNS.join(', ')}) FROM STDIN`)),
    );
    await c.query('ANALYZE calls');
  });
  return a.apiKey;
}

/** A's client: open loop from 127.0.0.1, on keep-alive connections of its own. */
function tenantAClient(port: number, key: string, sockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const read = (): Promise<string> =>
    new Promise((resolve) => {
      const req = request(
        {
          host: A_ADDRESS,
          port,
          path: A_PATH,
          localAddress: A_ADDRESS,
          agent,
          headers: { authorization: `Bearer ${key}` },
          timeout: A_TIMEOUT_MS,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.statusCode)));
          res.on('error', () => resolve('error'));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve('error'));
      req.end();
    });
  return {
    /**
     * `rate` requests a second for `seconds`, each sent when due whatever the others do;
     * `onTick` sees the answered latencies so far about every 2 s.
     */
    async run(
      rate: number,
      seconds: number,
      onTick: (latencies: readonly number[], sent: number) => void,
    ): Promise<{ latencies: number[]; failed: Record<string, number> }> {
      const latencies: number[] = [];
      const failed: Record<string, number> = {};
      const pending: Array<Promise<void>> = [];
      const interval = 1000 / rate;
      const total = Math.round(rate * seconds);
      const t0 = performance.now();
      let sent = 0;
      const ticker = setInterval(() => onTick(latencies, sent), 2000);
      try {
        for (let i = 0; i < total; i++) {
          const due = t0 + i * interval;
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          sent++;
          pending.push(
            read().then((status) => {
              if (status === '200') latencies.push(performance.now() - due);
              else failed[status] = (failed[status] ?? 0) + 1;
            }),
          );
        }
        await Promise.all(pending);
      } finally {
        clearInterval(ticker);
      }
      return { latencies, failed };
    },
    close: () => agent.destroy(),
  };
}

/** A flooder process and its latest totals (one JSON line a second on its stdout). */
function startFlooder(file: string, port: number, opts: LoopbackOptions, i: number) {
  const child = startTsChild(`flooder ${i + 1}`, file, {
    PATH: process.env.PATH,
    FLOOD_HOST: '127.0.0.1',
    FLOOD_PORT: String(port),
    FLOOD_LOCAL_ADDRESS: FLOOD_ADDRESS,
    FLOOD_PATH: A_PATH,
    FLOOD_KEEPALIVE: String(opts.keepAlive),
    FLOOD_CLOSING: String(opts.closing),
    FLOOD_MAX_SECONDS: String(opts.seconds + 60),
  });
  let latest: (FloodTotals & { done?: boolean }) | undefined;
  let rest = '';
  child.proc.stdout?.on('data', (chunk: Buffer) => {
    rest += chunk.toString('utf8');
    const lines = rest.split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('{')) latest = JSON.parse(line) as FloodTotals & { done?: boolean };
    }
  });
  return {
    child,
    latest: () => latest,
    async stop(): Promise<FloodTotals> {
      await child.stop();
      if (!latest?.done) throw new Error(`flooder ${i + 1} said no final result:\n${child.tail()}`);
      return latest;
    },
  };
}

function addTotals(all: readonly FloodTotals[]): FloodTotals {
  const sum = (f: (t: FloodTotals) => number) => all.reduce((n, t) => n + f(t), 0);
  const merge = (f: (t: FloodTotals) => Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const t of all) for (const [k, v] of Object.entries(f(t))) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  return {
    seconds: Math.max(...all.map((t) => t.seconds)),
    sent: sum((t) => t.sent),
    byStatus: merge((t) => t.byStatus),
    opened: sum((t) => t.opened),
    connected: sum((t) => t.connected),
    closedAfterAnswer: sum((t) => t.closedAfterAnswer),
    closedWithoutAnswer: sum((t) => t.closedWithoutAnswer),
    reset: sum((t) => t.reset),
    connectErrors: merge((t) => t.connectErrors),
    cpuMs: sum((t) => t.cpuMs),
  };
}

const answeredOf = (t: FloodTotals): number => Object.values(t.byStatus).reduce((n, v) => n + v, 0);

/** The windows keep their raw samples while the run lasts; the result drops them. */
type LiveWindow = WindowResult & { aSamples: number[] };

function summarizeTarget(target: Target, windows: readonly LiveWindow[]): TargetResult {
  const mine = windows.filter((w) => w.target === target);
  const quietW = mine.filter((w) => !w.flooded);
  const floodW = mine.filter((w) => w.flooded);
  // Percentiles over every sample of the windows, not averages of the windows'.
  const samplesOf = (ws: readonly LiveWindow[]) => ws.flatMap((w) => w.aSamples);
  const quiet = percentiles(samplesOf(quietW));
  const flooded = percentiles(samplesOf(floodW));
  const totals = addTotals(floodW.map((w) => w.flood as FloodTotals));
  const seconds = floodW.reduce((n, w) => n + (w.flood?.seconds ?? 0), 0);
  const answered = answeredOf(totals);
  const mean = (ws: readonly WindowResult[], f: (w: WindowResult) => number) =>
    round2(ws.reduce((n, w) => n + f(w), 0) / Math.max(1, ws.length));
  const byRound = floodW.map((w) => {
    const alone = quietW.find((q) => q.round === w.round);
    return alone ? round2(w.a.p95 / alone.a.p95) : Number.NaN;
  });
  const targetCores = mean(floodW, (w) => (target === 'api' ? w.cores.api : w.cores.control));
  const apiQuiet = mean(quietW, (w) => w.cores.api);
  return {
    target,
    quiet,
    flooded,
    ratioP95: round2(flooded.p95 / quiet.p95),
    ratioP95ByRound: byRound,
    ratioP95Median: round2(median(byRound)),
    flood: {
      requests: totals.sent,
      perSecond: Math.round(totals.sent / Math.max(0.001, seconds)),
      answered,
      byStatus: totals.byStatus,
      share429: round2((totals.byStatus['429'] ?? 0) / Math.max(1, answered)),
      shareClosedAfterAnswer: round2(totals.closedAfterAnswer / Math.max(1, answered)),
      connectionsOpened: totals.opened,
      reset: totals.reset,
      connectErrors: totals.connectErrors,
      flooderCores: round2(totals.cpuMs / 1000 / Math.max(0.001, seconds)),
    },
    targetCoresFlooded: targetCores,
    apiCoresQuiet: apiQuiet,
    cpuMsPerFloodRequest: Number(
      (
        (1000 * Math.max(0, targetCores - (target === 'api' ? apiQuiet : 0))) /
        Math.max(1, totals.sent / Math.max(0.001, seconds))
      ).toFixed(3),
    ),
  };
}

export async function runLoopbackFlood(
  knex: Knex,
  env: { benchUrl: string; prefix: string; encryptionKey: string },
  opts: LoopbackOptions,
): Promise<LoopbackResult> {
  const key = await seedTenantA(knex, env.benchUrl);
  const compiled = await compileForBench([FLOODER, CONTROL]);
  const [apiPort, controlPort] = [await freePort(), await freePort()];
  const inspectPort = opts.profile ? await freePort() : undefined;
  const api: Child = startTsChild('api', serviceEntry('apps/api/dist/server.js'), {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: env.benchUrl,
    QUEUE_PREFIX: env.prefix,
    PORT: String(apiPort),
    // As shipped: the access log on (a refused request never reaches it; A's do).
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    INGEST_TOKEN: randomBytes(24).toString('hex'),
    CURSOR_SECRET: randomBytes(24).toString('hex'),
    SECRET_ENCRYPTION_KEY: env.encryptionKey,
    ...UNLIMITED_API_RATE,
    ...(inspectPort ? { NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}` } : {}),
  });
  const control: Child = startTsChild('control', compiled[CONTROL] ?? CONTROL, {
    PATH: process.env.PATH,
    PORT: String(controlPort),
  });
  const flooderFile = compiled[FLOODER] ?? FLOODER;
  const a = tenantAClient(apiPort, key, opts.aSockets);
  const windows: LiveWindow[] = [];
  let profile: ProfileSummary | undefined;
  let profiler: Awaited<ReturnType<typeof inspectorProfiler>> | undefined;
  try {
    await Promise.all([
      waitForHttp(api, `http://127.0.0.1:${apiPort}/healthz`),
      waitForHttp(control, `http://127.0.0.1:${controlPort}/healthz`),
    ]);
    if (inspectPort) profiler = await inspectorProfiler(inspectPort);
    log(
      `  API (${serviceEntry('apps/api/dist/server.js')}) on ${apiPort}, control on ${controlPort}; A reads ${A_PATH} from ${A_ADDRESS} at ${opts.aRate}/s; the flood from ${FLOOD_ADDRESS}: ${opts.flooders} process(es) × (${opts.keepAlive} keep-alive + ${opts.closing} closing connections)`,
    );
    // Warm-up: the API's code paths compiled, its pools open, A's connections made.
    await a.run(opts.aRate, 3, () => undefined);

    const window = async (round: number, target: Target, flooded: boolean) => {
      const label = `  [round ${round + 1}/${opts.rounds}] ${flooded ? `flood → ${target}` : `A alone (before ${target})`}`;
      const flooders = flooded
        ? Array.from({ length: opts.flooders }, (_, i) =>
            startFlooder(flooderFile, target === 'api' ? apiPort : controlPort, opts, i),
          )
        : [];
      if (flooded) await sleep(RAMP_MS);
      const profiling = profiler && !profile && flooded && target === 'api';
      if (profiling) await profiler?.start();
      const cpu0 = {
        api: cpuSnapshot(api.proc.pid),
        control: cpuSnapshot(control.proc.pid),
        bench: process.cpuUsage(),
      };
      const t0 = performance.now();
      const floodAt0 = flooders.map((f) => f.latest()?.sent ?? 0);
      let lastSent = floodAt0.reduce((n, v) => n + v, 0);
      let lastAt = t0;
      const { latencies, failed } = await a.run(opts.aRate, opts.seconds, (lat, sent) => {
        const now = performance.now();
        const floodSent = flooders.reduce((n, f) => n + (f.latest()?.sent ?? 0), 0);
        const floodNote = flooded
          ? `; flood ${Math.round(((floodSent - lastSent) * 1000) / Math.max(1, now - lastAt))}/s`
          : '';
        lastSent = floodSent;
        lastAt = now;
        const sorted = [...lat].sort((x, y) => x - y);
        log(
          `${label} ${Math.round((now - t0) / 1000)}/${opts.seconds} s: A ${sent} sent, ${lat.length} answered, p95 so far ${round1(percentile(sorted, 95))} ms${floodNote}; load ${loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')}`,
        );
      });
      const elapsed = (performance.now() - t0) / 1000;
      const cpu1 = {
        api: cpuSnapshot(api.proc.pid),
        control: cpuSnapshot(control.proc.pid),
        bench: process.cpuUsage(cpu0.bench),
      };
      if (profiling && profiler) {
        const dir = join(ROOT, 'bench', '.results');
        mkdirSync(dir, { recursive: true });
        const file = join(
          dir,
          `fairness-api-flood-${new Date().toISOString().replace(/:/g, '-')}.cpuprofile`,
        );
        writeFileSync(file, JSON.stringify(await profiler.stop()));
        profile = summarizeCpuProfile(file, 25);
        log(formatProfile(profile));
      }
      const totals = flooded ? addTotals(await Promise.all(flooders.map((f) => f.stop()))) : null;
      // Never below 0: Postgres's count is of the processes alive, and backends come and go.
      const perSec = (x: number | undefined, y: number | undefined) =>
        round2(Math.max(0, (x ?? 0) - (y ?? 0)) / elapsed);
      const w: LiveWindow = {
        round,
        target,
        flooded,
        a: percentiles(latencies),
        aSamples: latencies,
        aFailed: failed,
        ...(totals
          ? {
              flood: {
                ...totals,
                perSecond: Math.round(totals.sent / Math.max(0.001, totals.seconds)),
              },
            }
          : {}),
        cores: {
          api: perSec(cpu1.api?.group, cpu0.api?.group),
          control: perSec(cpu1.control?.group, cpu0.control?.group),
          flooder: totals ? round2(totals.cpuMs / 1000 / Math.max(0.001, totals.seconds)) : 0,
          postgres: perSec(cpu1.api?.postgres, cpu0.api?.postgres),
          bench: round2((cpu1.bench.user + cpu1.bench.system) / 1e6 / elapsed),
        },
        load: loadavg().map((l) => round2(l)),
      };
      windows.push(w);
      const f = w.flood;
      log(
        `${label}: A p50/p95/p99 ${w.a.p50}/${w.a.p95}/${w.a.p99} ms (${w.a.samples} answered${Object.keys(failed).length ? `, failed ${JSON.stringify(failed)}` : ''})${
          f
            ? `; flood ${f.perSecond}/s, ${f.sent} sent, answers ${JSON.stringify(f.byStatus)}, ${f.closedAfterAnswer} closed after the answer, ${f.reset} reset, connect errors ${JSON.stringify(f.connectErrors)}`
            : ''
        }; cores: API ${w.cores.api}, control ${w.cores.control}, flooder ${w.cores.flooder}, Postgres ${w.cores.postgres}, bench ${w.cores.bench}; load ${w.load.join(' ')}`,
      );
      await sleep(SETTLE_MS);
    };

    for (let r = 0; r < opts.rounds; r++) {
      const order: Target[] = r % 2 === 0 ? ['api', 'control'] : ['control', 'api'];
      for (const target of order) {
        await window(r, target, false);
        await window(r, target, true);
      }
    }
  } finally {
    a.close();
    profiler?.close();
    await control.stop();
    await api.stop();
  }
  const apiResult = summarizeTarget('api', windows);
  const controlResult = summarizeTarget('control', windows);
  return {
    options: opts,
    aAddress: A_ADDRESS,
    floodAddress: FLOOD_ADDRESS,
    aPath: A_PATH,
    windows: windows.map(({ aSamples: _samples, ...w }) => w),
    api: apiResult,
    control: controlResult,
    ...(profile ? { profile } : {}),
  };
}
