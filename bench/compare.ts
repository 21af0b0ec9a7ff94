/**
 * The product against its bare references, in one run (issue 29): `npm run bench:compare`.
 *
 * Every figure of a shared machine moves with the other work on it; a ratio of two
 * measurements taken in the same run, alternating, moves far less. So this one command runs:
 *  P1  GET /api/v1/calls?limit=20 of the real API ÷ a bare Express route on a plain
 *      pg.Pool doing the same key lookup (a query every time), page SQL and rendering, its
 *      answer checked byte for byte against the API's first (bench/compare/bare-server.ts);
 *  P3  POST /api/v1/calls/outbound with a new Idempotency-Key per request ÷ a bare route doing
 *      the same Redis and Postgres I/O (key lookup, SET NX marker, the INSERT … SELECT, the
 *      dial job, the stored response);
 *  P4  one worker's deliveries/s ÷ a raw keep-alive axios POST loop to the same receiver,
 *      with 1 and 10 subscriptions: bench/delivery.ts (phases a and b) run as a child with
 *      small counts, its result file read back; rows inserted + updated per delivery too;
 *  P5  (BENCH_COMPARE_P5=1) ingest → receipt at 200 events/s: bench/delivery.ts phase d;
 *  A   the key lookup and rate limit's CPU per request ÷ the page work's, in-process
 *      (bench/compare/auth-share.ts; the issue's "at most a tenth of a page").
 * and prints each ratio with the CPU milliseconds per unit (request or delivery) of every
 * process: API or bare server, worker, Postgres (backends of the bench database), Redis (all
 * of it: other users of this Redis count too), read from /proc/<pid>/stat utime + stime
 * before and after each measurement. P1 and P3 run no worker. The API, the worker and the
 * bare server run compiled, as the services ship (bench/lib/compiled.ts; BENCH_FROM_SOURCES=1
 * runs their TypeScript under tsx instead).
 *
 * Knobs (env): BENCH_DURATION (4 s per measurement, after BENCH_WARMUP 1 s), BENCH_ROUNDS
 * (2, alternating product and reference; medians), BENCH_CONNECTIONS (10), BENCH_COMPARE_CALLS
 * (10,000 calls seeded), BENCH_COMPARE_EVENTS (3,000 events with 1 subscription, a tenth of
 * that with 10), BENCH_AUTH_OPS (3,000 operations per side of A), BENCH_COMPARE_SKIP (comma
 * list of A,P1,P3,P4), BENCH_COMPARE_PROFILE=1 (the API under --cpu-prof during P1 and
 * P3, its self time summarised by area and function; BENCH_COMPARE_PROFILE_KEEP=1 keeps the
 * .cpuprofile files and prints where), BENCH_COMPARE_P5=1 (adds about
 * 90 s), BENCH_COMPARE_BASELINE (the API's `server.js` as another commit builds it, e.g. in a
 * `git worktree` of it with `npm ci && npm run build`: measured in the same rounds as a third
 * side of P1 and P3, so a change is judged against its parent on the same load), REDIS_URL. The database switchboard_bench_compare is recreated on every run.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createKnex, type Knex } from '@switchboard/db';
import { closeRedis, createRedis } from '@switchboard/queues';
import { cpuDelta, cpuTable } from './delivery/cpu';
import { formatProfile, summarizeCpuProfile } from './delivery/cpuprofile';
import { runCannon, stopCannon } from './lib/cannon';
import {
  type Child,
  installChildCleanup,
  ROOT,
  startTsChild,
  stopAllChildren,
  waitForHttp,
} from './lib/children';
import { compileForBench, serviceEntry } from './lib/compiled';
import { envInt, UNLIMITED_API_RATE } from './lib/env';
import { freePort } from './lib/http';
import { machineInfo } from './lib/machine';
import { cpuSnapshot } from './lib/proc';
import { log, step } from './lib/progress';
import { saveResult } from './lib/results';
import { median, table } from './lib/stats';
import { measureAuthShare, type AuthShare } from './compare/auth-share';
import { setupCompareDatabase, type CompareSetup } from './compare/setup';
import { deleteRedisPrefix } from './outbound/setup';

const DURATION_S = envInt('BENCH_DURATION', 4);
const WARMUP_S = envInt('BENCH_WARMUP', 1);
const ROUNDS = envInt('BENCH_ROUNDS', 2);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 10);
const CALLS = envInt('BENCH_COMPARE_CALLS', 10_000);
const EVENTS = envInt('BENCH_COMPARE_EVENTS', 3_000);
const AUTH_OPS = envInt('BENCH_AUTH_OPS', 3_000);
const SKIP = new Set((process.env.BENCH_COMPARE_SKIP ?? '').split(',').map((s) => s.trim()));
const P5 = process.env.BENCH_COMPARE_P5 === '1';
const PROFILE = process.env.BENCH_COMPARE_PROFILE === '1';
/** An API bundle built from another commit, measured in the same rounds (A/B of a change). */
const BASELINE = process.env.BENCH_COMPARE_BASELINE || null;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = '{sbbc}';

const fmt = (n: number | null | undefined, digits = 2): string =>
  n !== null && n !== undefined && Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '–';

/** CPU ms per unit of each process of one measurement (null: not part of it). */
interface CpuPerUnit {
  server: number | null;
  worker: number | null;
  postgres: number | null;
  redis: number | null;
}

interface Measurement {
  perSecond: number;
  units: number;
  non2xx: number;
  p50: number;
  p99: number;
  cpu: CpuPerUnit;
}

interface Side {
  label: string;
  runs: Measurement[];
}

interface Comparison {
  id: string;
  description: string;
  goal: string;
  product: Side;
  reference: Side;
  /** The API built from another commit (BENCH_COMPARE_BASELINE), measured alongside. */
  baseline?: Side;
  unit: string;
}

function cannon(
  title: string,
  opts: autocannon.Options,
  duration: number,
): Promise<autocannon.Result> {
  return runCannon(title, { ...opts, connections: CONNECTIONS }, duration);
}

/** Pids of the Postgres backends connected to the bench database now. */
async function backendPids(knex: Knex, dbName: string): Promise<number[]> {
  const { rows } = (await knex.raw(
    'SELECT pid FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()',
    [dbName],
  )) as { rows: { pid: number }[] };
  return rows.map((r) => r.pid);
}

/** One autocannon measurement of `server`, with the CPU of every process around it. */
async function measure(
  ctx: { knex: Knex; dbName: string },
  title: string,
  server: Child,
  opts: autocannon.Options,
): Promise<Measurement> {
  await cannon(`${title}: warmup`, opts, WARMUP_S);
  const t0 = cpuTable([]);
  const g0 = cpuSnapshot(server.proc.pid);
  const r = await cannon(title, opts, DURATION_S);
  const g1 = cpuSnapshot(server.proc.pid);
  const t1 = cpuTable([]);
  const pids = new Set(await backendPids(ctx.knex, ctx.dbName));
  const units = Math.max(1, r.requests.total);
  const per = (seconds: number | null) => (seconds === null ? null : (seconds * 1000) / units);
  return {
    perSecond: r.requests.average,
    units: r.requests.total,
    non2xx: r.non2xx + r.errors + r.timeouts,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpu: {
      server: per(g0 && g1 ? g1.group - g0.group : null),
      worker: null,
      postgres: per(cpuDelta(t0, t1, (pid) => pids.has(pid))),
      redis: per(cpuDelta(t0, t1, (_pid, comm) => comm === 'redis-server')),
    },
  };
}

const medianOf = (runs: Measurement[], pick: (m: Measurement) => number | null): number | null => {
  const xs = runs.map(pick).filter((x): x is number => x !== null && Number.isFinite(x));
  return xs.length ? median(xs) : null;
};

/** The API's profile (BENCH_COMPARE_PROFILE=1), summarised once it has exited. */
let apiProfile: string | null = null;

/** The bare references of P1 and P3 (compiled with the services: ./lib/compiled.ts). */
const BARE_SERVER = 'bench/compare/bare-server.ts';

/** P1 compares like with like: the bare page must answer exactly the API's bytes. */
async function sameAnswer(api: string, bare: string, headers: Record<string, string>) {
  const [a, b] = await Promise.all(
    [api, bare].map(async (url) => {
      const res = await fetch(url, { headers });
      if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
      return res.text();
    }),
  );
  if (a !== b) throw new Error(`the bare page's answer differs from the API's:\n${a}\n${b}`);
}

/** P1 and P3: the API and the bare server, alternating, `ROUNDS` times each. */
async function httpComparisons(setup: CompareSetup, bareServer: string): Promise<Comparison[]> {
  const [apiPort, barePort, basePort] = [await freePort(), await freePort(), await freePort()];
  // Shared, so that the bare page's next cursor, and so its whole answer, is the API's.
  const cursorSecret = randomBytes(24).toString('hex');
  const profDir = PROFILE ? mkdtempSync(join(tmpdir(), 'sb-compare-prof-')) : null;
  const apiEnv = (port: number): NodeJS.ProcessEnv => ({
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: setup.benchUrl,
    REDIS_URL,
    QUEUE_PREFIX: PREFIX,
    PORT: String(port),
    API_METRICS_PORT: '0',
    // The shipped default: the access log is on, its lines consumed as a log shipper would.
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    INGEST_TOKEN: randomBytes(24).toString('hex'),
    CURSOR_SECRET: cursorSecret,
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    // The tenant's own limit is lifted too (setupCompareDatabase): either would do.
    ...UNLIMITED_API_RATE,
    ...(profDir
      ? {
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${profDir}`,
        }
      : {}),
  });
  const api = startTsChild('api', serviceEntry('apps/api/dist/server.js'), apiEnv(apiPort));
  const base = BASELINE
    ? startTsChild('api-baseline', BASELINE, { ...apiEnv(basePort), NODE_OPTIONS: '' })
    : null;
  const bare = startTsChild('bare-server', bareServer, {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: setup.benchUrl,
    REDIS_URL,
    BENCH_REDIS_PREFIX: PREFIX,
    CURSOR_SECRET: cursorSecret,
    PORT: String(barePort),
  });
  const apiBase = `http://127.0.0.1:${apiPort}`;
  const bareBase = `http://127.0.0.1:${barePort}`;
  const baseBase = `http://127.0.0.1:${basePort}`;
  await step('starting the API and the bare server', () =>
    Promise.all([
      waitForHttp(api, `${apiBase}/healthz`),
      waitForHttp(bare, `${bareBase}/healthz`),
      base && waitForHttp(base, `${baseBase}/healthz`),
    ]),
  );
  const knex = createKnex(setup.benchUrl, { poolMax: 1 });
  const ctx = { knex, dbName: setup.dbName };
  const auth = { authorization: `Bearer ${setup.apiKey}` };
  await sameAnswer(`${apiBase}/api/v1/calls?limit=20`, `${bareBase}/page`, auth);
  const run = randomBytes(4).toString('hex');
  let counter = 0;
  const outboundBody = JSON.stringify({
    receptionist_id: setup.receptionistId,
    to: '+14155550123',
    customer_name: 'Bench Customer',
  });
  const outbound = (base: string, path: string): autocannon.Options => ({
    url: base,
    requests: [
      {
        method: 'POST',
        path,
        headers: { ...auth, 'content-type': 'application/json' },
        body: outboundBody,
        setupRequest: (req) => ({
          ...req,
          headers: { ...req.headers, 'idempotency-key': `c-${run}-${counter++}` },
        }),
      },
    ],
  });
  const cases = [
    {
      id: 'P1',
      description: 'GET /calls req/s ÷ bare route (key lookup, page SQL, render)',
      goal: '≥ 0.8',
      product: {
        label: 'API GET /api/v1/calls?limit=20',
        server: api,
        opts: { url: `${apiBase}/api/v1/calls?limit=20`, headers: auth },
      },
      reference: {
        label: 'bare GET /page',
        server: bare,
        opts: { url: `${bareBase}/page`, headers: auth },
      },
      baseline: base && {
        label: 'baseline API GET /api/v1/calls',
        server: base,
        opts: { url: `${baseBase}/api/v1/calls?limit=20`, headers: auth },
      },
    },
    {
      id: 'P3',
      description: 'outbound call (unique key) req/s ÷ bare route (same Redis + Postgres I/O)',
      goal: '≥ 0.8',
      product: {
        label: 'API POST /api/v1/calls/outbound',
        server: api,
        opts: outbound(apiBase, '/api/v1/calls/outbound'),
      },
      reference: {
        label: 'bare POST /outbound',
        server: bare,
        opts: outbound(bareBase, '/outbound'),
      },
      baseline: base && {
        label: 'baseline API POST /calls/outbound',
        server: base,
        opts: outbound(baseBase, '/api/v1/calls/outbound'),
      },
    },
  ].filter((c) => !SKIP.has(c.id));
  const out: Comparison[] = [];
  try {
    for (const c of cases) {
      const specs = [c.product, c.reference, ...(c.baseline ? [c.baseline] : [])];
      const sides: Side[] = specs.map((spec) => ({ label: spec.label, runs: [] }));
      for (let round = 1; round <= ROUNDS; round++) {
        // Rotate which side goes first, so a burst of other work lands on each in turn.
        for (let k = 0; k < specs.length; k++) {
          const i = (round - 1 + k) % specs.length;
          const spec = specs[i] as (typeof specs)[number];
          const m = await measure(ctx, `${c.id} ${spec.label} #${round}`, spec.server, spec.opts);
          (sides[i] as Side).runs.push(m);
          if (m.non2xx > 0) {
            throw new Error(`${c.id} ${spec.label}: ${m.non2xx} non-2xx answers or errors`);
          }
        }
      }
      const [product, reference, baseline] = sides as [Side, Side, Side | undefined];
      out.push({ ...c, product, reference, baseline, unit: 'request' });
    }
  } finally {
    await knex.destroy();
    await Promise.all([api.stop(), bare.stop(), base?.stop()]);
    if (profDir) {
      // tsx's own process writes a small profile too: the API's is the largest.
      const files = readdirSync(profDir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(profDir, f))
        .sort((a, b) => statSync(b).size - statSync(a).size);
      if (files[0]) apiProfile = formatProfile(summarizeCpuProfile(files[0], 25));
      if (!process.env.BENCH_COMPARE_PROFILE_KEEP)
        rmSync(profDir, { recursive: true, force: true });
      else log(`profiles kept in ${profDir}`);
    }
  }
  return out;
}

interface DeliveryResult {
  throughput: {
    phase: string;
    perSecond: number;
    delivered: number;
    complete: boolean;
    cpuMsPerDelivery: { worker: number | null; postgres: number; redis: number };
    perDelivery: { rowsInserted: number; rowsUpdated: number };
  }[];
  raw: { perSecond: number; requests: number; cpu: { bench: number; redis: number } }[];
  rawMeanPerSecond: number | null;
  latency: { rate: number; latency: { p50: number; p99: number } } | null;
}

/** P4 (and P5): bench/delivery.ts as a child with small counts; its result file read back. */
async function deliveryComparisons(): Promise<{
  comparisons: Comparison[];
  rows: { phase: string; perDelivery: number }[];
  p5: { p50: number; p99: number; rate: number } | null;
}> {
  const phases = ['a', 'b', ...(P5 ? ['d'] : [])];
  const started = Date.now();
  const child = startTsChild('delivery benchmark', 'bench/delivery.ts', {
    ...process.env,
    REDIS_URL,
    BENCH_DELIVERY_DATABASE_NAME: 'switchboard_bench_compare_delivery',
    BENCH_PHASES: phases.join(','),
    BENCH_EVENTS_1SUB: String(EVENTS),
    BENCH_EVENTS_10SUB: String(Math.max(1, Math.round(EVENTS / 10))),
    BENCH_RAW_REQUESTS: String(EVENTS),
    BENCH_LATENCY_EVENTS: process.env.BENCH_LATENCY_EVENTS ?? '12000',
  });
  // Its progress, as it goes.
  child.proc.stderr?.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim()) process.stderr.write(`  [delivery] ${line}\n`);
    }
  });
  const code = await child.exited;
  if (code !== '0') throw new Error(`bench/delivery.ts exited with ${code}:\n${child.tail()}`);
  const dir = join(ROOT, 'bench', '.results');
  const file = readdirSync(dir)
    .filter((f) => f.startsWith('delivery-') && f.endsWith('.json'))
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).mtimeMs >= started)
    .sort()
    .pop();
  if (!file) throw new Error('bench/delivery.ts wrote no result file');
  const r = JSON.parse(readFileSync(file, 'utf8')) as DeliveryResult;
  const raws = r.raw.map((x): Measurement => ({
    perSecond: x.perSecond,
    units: x.requests,
    non2xx: 0,
    p50: Number.NaN,
    p99: Number.NaN,
    cpu: {
      server: null,
      // The raw loop runs in the delivery benchmark's own process.
      worker: (x.cpu.bench * 1000) / Math.max(1, x.requests),
      postgres: null,
      redis: null,
    },
  }));
  const comparisons: Comparison[] = [];
  for (const [phase, subs] of [
    ['a1', 1],
    ['a10', 10],
  ] as const) {
    const t = r.throughput.find((x) => x.phase === phase);
    if (!t) continue;
    if (!t.complete) throw new Error(`delivery phase ${phase} did not deliver everything`);
    comparisons.push({
      id: `P4 (${subs} sub${subs > 1 ? 's' : ''})`,
      description: `one worker's deliveries/s ÷ raw keep-alive POST loop, ${subs} subscription${subs > 1 ? 's' : ''}`,
      goal: '≥ 0.6',
      unit: 'delivery',
      product: {
        label: `worker, ${subs} subscription${subs > 1 ? 's' : ''}`,
        runs: [
          {
            perSecond: t.perSecond,
            units: t.delivered,
            non2xx: 0,
            p50: Number.NaN,
            p99: Number.NaN,
            cpu: {
              server: null,
              worker: t.cpuMsPerDelivery.worker,
              postgres: t.cpuMsPerDelivery.postgres,
              redis: t.cpuMsPerDelivery.redis,
            },
          },
        ],
      },
      reference: { label: 'raw axios loop (mean of runs)', runs: raws },
    });
  }
  return {
    comparisons,
    rows: r.throughput.map((t) => ({
      phase: t.phase,
      perDelivery: t.perDelivery.rowsInserted + t.perDelivery.rowsUpdated,
    })),
    p5: r.latency ? { ...r.latency.latency, rate: r.latency.rate } : null,
  };
}

async function main(): Promise<number> {
  installChildCleanup(stopCannon);
  const startedAt = new Date();
  const machine = machineInfo();
  log(
    `bench:compare: nproc ${machine.nproc}, node ${machine.node}, load ${machine.loadavg.join(' ')}; ${DURATION_S} s per measurement after ${WARMUP_S} s warmup, ${ROUNDS} rounds, ${CONNECTIONS} connections`,
  );
  const comparisons: Comparison[] = [];
  let rows: { phase: string; perDelivery: number }[] = [];
  let p5: { p50: number; p99: number; rate: number } | null = null;
  let authShare: AuthShare | null = null;
  if (!SKIP.has('P1') || !SKIP.has('P3') || !SKIP.has('A')) {
    const redis = createRedis(REDIS_URL, 'worker');
    try {
      await deleteRedisPrefix(redis, PREFIX);
      const setup = await step(`recreating the bench database (${CALLS} calls)`, () =>
        setupCompareDatabase(CALLS),
      );
      if (!SKIP.has('A')) {
        authShare = await step('the key lookup and rate limit against the page work (A)', () =>
          measureAuthShare(setup, REDIS_URL, PREFIX, AUTH_OPS, CONNECTIONS),
        );
      }
      if (!SKIP.has('P1') || !SKIP.has('P3')) {
        const bare = (await compileForBench([BARE_SERVER]))[BARE_SERVER] ?? BARE_SERVER;
        comparisons.push(...(await httpComparisons(setup, bare)));
      }
    } finally {
      await deleteRedisPrefix(redis, PREFIX).catch(() => undefined);
      await closeRedis(redis);
    }
  }
  if (!SKIP.has('P4')) {
    const d = await step('delivery benchmark (P4) as a child', deliveryComparisons);
    comparisons.push(...d.comparisons);
    rows = d.rows;
    p5 = d.p5;
  }

  const loadAfter = loadavg().map((n) => Number(n.toFixed(2)));
  const summary = comparisons.map((c) => {
    const side = (s: Side) => ({
      label: s.label,
      perSecond: medianOf(s.runs, (m) => m.perSecond),
      cpu: {
        server: medianOf(s.runs, (m) => m.cpu.server),
        worker: medianOf(s.runs, (m) => m.cpu.worker),
        postgres: medianOf(s.runs, (m) => m.cpu.postgres),
        redis: medianOf(s.runs, (m) => m.cpu.redis),
      },
      non2xx: s.runs.reduce((n, m) => n + m.non2xx, 0),
      perRound: s.runs.map((m) => Math.round(m.perSecond)),
    });
    const product = side(c.product);
    const reference = side(c.reference);
    const baseline = c.baseline ? side(c.baseline) : null;
    const over = (a: number | null, b: number | null) => (a !== null && b ? a / b : null);
    return {
      id: c.id,
      description: c.description,
      goal: c.goal,
      unit: c.unit,
      product,
      reference,
      ratio: over(product.perSecond, reference.perSecond),
      /** The server's CPU per unit ÷ the reference's (the issue's "at most 1.25×"). */
      cpuRatio: over(product.cpu.server, reference.cpu.server),
      baseline: baseline && {
        ...baseline,
        ratio: over(baseline.perSecond, reference.perSecond),
        cpuRatio: over(baseline.cpu.server, reference.cpu.server),
      },
    };
  });
  const report = [
    '',
    `bench:compare (issue 29): ${machine.nproc} cores (${machine.cpuModel}), node ${machine.node}; load ${machine.loadavg.join(' ')} before, ${loadAfter.join(' ')} after`,
    `P1, P3: autocannon, ${CONNECTIONS} connections, ${DURATION_S} s after ${WARMUP_S} s warmup, ${ROUNDS} alternating rounds, medians${SKIP.has('P4') ? '' : `; P4: bench/delivery.ts phases a, b (${EVENTS} events with 1 subscription, ${Math.round(EVENTS / 10)} with 10)`}${SKIP.size > 1 || [...SKIP][0] ? `; skipped: ${[...SKIP].filter(Boolean).join(', ')}` : ''}`,
    '',
    table([
      [
        'id',
        'ratio',
        'goal',
        'side',
        '/s',
        'CPU ÷ ref',
        'CPU ms per unit: server',
        'worker',
        'postgres',
        'redis',
        'non-2xx',
        '/s per round',
      ],
      ...summary.flatMap((s) =>
        [s.product, s.reference, ...(s.baseline ? [s.baseline] : [])].map((side, i) => [
          i === 0 ? s.id : '',
          i === 0 ? fmt(s.ratio) : i === 2 && s.baseline ? fmt(s.baseline.ratio) : '',
          i === 0 ? s.goal : '',
          side.label,
          fmt(side.perSecond, 0),
          i === 0 ? fmt(s.cpuRatio) : i === 2 && s.baseline ? fmt(s.baseline.cpuRatio) : '',
          fmt(side.cpu.server, 3),
          fmt(side.cpu.worker, 3),
          fmt(side.cpu.postgres, 3),
          fmt(side.cpu.redis, 3),
          String(side.non2xx),
          side.perRound.join(' / '),
        ]),
      ),
    ]),
    '',
    '"CPU ÷ ref": the server\'s CPU per unit ÷ the reference\'s. CPU ms per unit: per request (P1, P3) or per delivery (P4). "server": the API or the bare server; "worker": the worker, or for the raw loop the process running it; "postgres": the backends of the bench database; "redis": every redis-server process (others using this Redis count too).',
  ];
  if (authShare) {
    const a = authShare;
    const side = (x: typeof a.auth) =>
      `${fmt(x.cpu.bench, 3)} here + ${fmt(x.cpu.postgres, 3)} postgres (+ ${fmt(x.cpu.redis, 3)} redis) ms, ${fmt(x.perSecond, 0)}/s`;
    report.push(
      '',
      `A  key lookup + rate limit ÷ page work, CPU per request (in-process, ${AUTH_OPS} × 2 each, ${CONNECTIONS} at a time; goal ≤ 0.10): ${fmt(a.share)} (${fmt(a.shareWithRedis)} counting Redis)`,
      `   key lookup + rate limit: ${side(a.auth)}`,
      `   page work (list of 20 + render): ${side(a.page)}`,
    );
  }
  if (apiProfile) {
    report.push(
      '',
      'The API under --cpu-prof during P1/P3 (BENCH_COMPARE_PROFILE=1: the profiler slows it, the ratios of such a run do not count):',
      apiProfile.replace(/^\S+: /, ''),
    );
  }
  if (rows.length) {
    report.push(
      `rows inserted + updated per delivery (pg_stat_database; goal ≤ 2): ${rows.map((r) => `${r.phase} ${fmt(r.perDelivery)}`).join(', ')}`,
    );
  }
  if (p5) {
    report.push(
      `P5 ingest → receipt at ${p5.rate}/s: p50 ${fmt(p5.p50, 1)} ms, p99 ${fmt(p5.p99, 1)} ms (goal p50 ≤ 25, p99 ≤ 100)`,
    );
  }
  process.stdout.write(`${report.join('\n')}\n`);
  saveResult(
    'compare',
    startedAt,
    {
      benchmark: 'compare',
      command: 'npm run bench:compare',
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      loadAfter,
      settings: {
        durationSeconds: DURATION_S,
        warmupSeconds: WARMUP_S,
        rounds: ROUNDS,
        connections: CONNECTIONS,
        calls: CALLS,
        events: EVENTS,
        p5: P5,
      },
      summary,
      comparisons,
      rowsPerDelivery: rows,
      p5,
      authShare,
    },
    log,
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(
      `\ncompare benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    await stopAllChildren();
    process.exit(1);
  },
);
