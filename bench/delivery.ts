/**
 * Event delivery (issue 5): `npm run bench:delivery`.
 *
 * One run measures, against one HTTPS receiver on 127.0.0.1 (bench/delivery/receiver.ts, its
 * own process, answers 200 at once, keep-alive):
 *  (a) deliveries/s of ONE worker process (`node apps/worker/dist/main.js`, compiled as it
 *      ships: bench/lib/compiled.ts; WORKER_CONCURRENCY=50): 20,000 events with 1 subscription, then 2,000 events with 10
 *      (20,000 deliveries; 20,000 × 10 takes over ten minutes on 2 cores: set
 *      BENCH_EVENTS_10SUB=20000 for it). The events are emitted with `emit()` in transactions
 *      of 500 BEFORE the worker starts (a fresh worker process per case), and the rate is
 *      deliveries / (last − first receipt);
 *  (b) a raw keep-alive axios POST loop to the same receiver at the same concurrency, run
 *      before and after (a);
 *  (c) a BullMQ no-op worker on its own prefix draining pre-added jobs;
 *  (d) end-to-end latency ingest → receipt at a steady 100/s for 40 s (open loop, one event
 *      per transaction, commit time taken in this process right after COMMIT returns, receipt
 *      time taken by the receiver on the same clock), 1 subscription; then the same at 50/s
 *      (below the worker's 1-subscription capacity) to separate queueing from the pipeline;
 *  (e) 1 event → 100 subscriptions, commit → all 100 received, repeated;
 *  (s) duplicates without a crash: TWO worker processes, a receiver answering each request
 *      in 300-600 ms (attempts outlast the first-attempt lease and stay in flight), 10,000
 *      events with 1 subscription (BENCH_DUP_EVENTS); requests received − deliveries = the
 *      duplicates (goal 0: no worker dies). Run it beside `npm test` for a loaded machine;
 * While (a) runs it samples pg_stat_activity and pg_stat_database and the CPU of every
 * process involved (/proc), and how long the worker's main thread (in (b), the loop's) was
 * on a CPU and how long it was runnable but waiting for one (schedstat); after each worker
 * phase it reads the worker's /metrics. With BENCH_CPU_PROF=1 each worker and each raw loop
 * also runs under `--cpu-prof` and its profile is summarised, so their HTTP clients' shares
 * compare (the profiler slows them down: use the rates of a run without it).
 *
 * Knobs (env): BENCH_EVENTS_1SUB (20000), BENCH_EVENTS_10SUB (2000), BENCH_CONCURRENCY (50),
 * BENCH_RAW_REQUESTS (20000), BENCH_NOOP_JOBS (50000), BENCH_RATE (100/s; runs before 5 December 2026 used 200),
 * BENCH_LATENCY_EVENTS (4000), BENCH_LOW_RATE (50/s), BENCH_LOW_RATE_EVENTS (1000),
 * BENCH_FANOUT_SUBS (100), BENCH_FANOUT_REPEATS (5), BENCH_PHASE_TIMEOUT (900 s per phase),
 * BENCH_PHASES (a,b,c,d,e; add x for (a) with 1 subscription and TWO worker processes, s for
 * the duplicates phase), BENCH_DUP_EVENTS (10000),
 * BENCH_LOG_LEVEL (the worker's LOG_LEVEL, default info as shipped; its stdout is consumed),
 * BENCH_WORKER_NODE_OPTIONS (NODE_OPTIONS for the worker processes only, for experiments
 * with Node's and V8's settings; none by default, as shipped),
 * BENCH_CPU_PROF=1, BENCH_FROM_SOURCES=1 (the worker's TypeScript under tsx), BENCH_TRACING (off; on = OpenTelemetry spans exported to a sink on 127.0.0.1,
 * down = exported to a closed port: bench/delivery/tracing.ts), BENCH_KEEP_DB=1 (keep
 * switchboard_bench_delivery; it is dropped at the end by default), BENCH_PARTITION_DAYS (0:
 * daily partitions added to each daily table, as a service keeping that many days of history
 * has: bench/delivery/setup.ts), REDIS_URL.
 * Redis keys: everything under `{sbbd-<run id>` is deleted at the end.
 * Result: stdout table, bench/.results/delivery-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { createKnex, type Knex } from '@switchboard/db';
import { buildEnvelope, emit } from '@switchboard/events';
import { closeRedis, createRedis, DEFAULT_JOB_OPTIONS, type Redis } from '@switchboard/queues';
import { generateSigningSecret, signPayload } from '@switchboard/webhooks';
import { generateCertificate } from '../packages/webhooks/src/testing/tls-receiver';
import { installChildCleanup, ROOT, startNodeChild, stopAllChildren } from './delivery/children';
import type { NodeChild } from './delivery/children';
import {
  cpuDelta,
  cpuTable,
  threadDelta,
  threadTime,
  type CpuTable,
  type ThreadTime,
} from './delivery/cpu';
import { startBenchTracing, type TracingMode } from './delivery/tracing';
import { formatProfile, summarizeCpuProfile, type ProfileSummary } from './delivery/cpuprofile';
import { histogram, parseMetrics, value, type Samples } from './delivery/metrics';
import { PgSampler, type PgSampleSummary } from './delivery/pg-sampler';
import { nowMs } from './delivery/protocol';
import type { FromRawLoop, RawLoopDone } from './delivery/raw-loop';
import { ReceiverClient } from './delivery/receiver-client';
import {
  createTenant,
  deleteRedisKeys,
  dropDatabase,
  recreateDatabase,
  type BenchTenant,
} from './delivery/setup';
import { closeHttpAgent, freePort, httpGet } from './lib/http';
import { compileForBench, serviceEntry } from './lib/compiled';
import { envInt } from './lib/env';
import { machineInfo } from './lib/machine';
import { log, progressBar, sleep, step } from './lib/progress';
import { summarize, table, type LatencySummary } from './lib/stats';

const EVENTS_1 = envInt('BENCH_EVENTS_1SUB', 20_000);
const EVENTS_10 = envInt('BENCH_EVENTS_10SUB', 2_000);
const DUP_EVENTS = envInt('BENCH_DUP_EVENTS', 10_000);
const SUBS_10 = 10;
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 50);
const RAW_REQUESTS = envInt('BENCH_RAW_REQUESTS', 20_000);
const NOOP_JOBS = envInt('BENCH_NOOP_JOBS', 50_000);
const RATE = envInt('BENCH_RATE', 100);
const LATENCY_EVENTS = envInt('BENCH_LATENCY_EVENTS', 4_000);
const LOW_RATE = envInt('BENCH_LOW_RATE', 50);
const LOW_RATE_EVENTS = envInt('BENCH_LOW_RATE_EVENTS', 1_000);
const FANOUT_SUBS = envInt('BENCH_FANOUT_SUBS', 100);
const FANOUT_REPEATS = envInt('BENCH_FANOUT_REPEATS', 5);
const PHASE_TIMEOUT_MS = envInt('BENCH_PHASE_TIMEOUT', 900) * 1000;
const EMIT_BATCH = 500;
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const KEEP_DB = process.env.BENCH_KEEP_DB === '1';
/** Daily partitions beyond a new database's (10 a table), as days of history add them. */
const PARTITION_DAYS = Number(process.env.BENCH_PARTITION_DAYS ?? 0);
const TRACING = (process.env.BENCH_TRACING ?? 'off') as TracingMode;
const PHASES = new Set((process.env.BENCH_PHASES ?? 'a,b,c,d,e').split(',').map((s) => s.trim()));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN = randomBytes(4).toString('hex');
/** Every Redis key of this benchmark starts with `{sbbd-`; a run's own keys with PREFIX. */
const PREFIX = `{sbbd-${RUN}}`;
const NOOP_PREFIX = `{sbbd-${RUN}-noop}`;

const TARGET_RATIO = 0.6;
const TARGET_ENGINE_CPU_MS = 0.25;
// Issue 41's goals at 100 events/s (issue 29's were 25 / 100 ms at 200/s).
const TARGET_P50_MS = 15;
const TARGET_P99_MS = 60;
const TARGET_FANOUT_MS = 500;

const fmt = (n: number | null | undefined, digits = 0): string =>
  n !== null && n !== undefined && Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
const r2 = (n: number): number => Number(n.toFixed(2));
const met = (ok: boolean): string => (ok ? 'MET' : 'MISSED');
/** A second line: a main thread's time on a CPU and waiting for one; nothing without /proc. */
const threadLine = (who: string, t: ThreadTime | null): string =>
  t
    ? `\n    the ${who}'s main thread: ${fmt(t.onCpu, 1)} s on a CPU, ${fmt(t.waiting, 1)} s runnable but waiting for one`
    : '';

/** CPU spent by each party while a phase ran, in seconds. */
interface CpuUse {
  worker: number | null;
  /** Of which in the kernel (system time): socket syscalls, loopback TCP. */
  workerSystem: number | null;
  receiver: number;
  bench: number;
  /** Backends of the bench database plus Postgres' background processes. */
  postgresBench: number;
  /** Every postgres process (other databases on this machine included). */
  postgresAll: number;
  redis: number;
  wallSeconds: number;
  /** The worker's (or the raw loop's) main thread: on a CPU, and runnable but waiting for one. */
  thread: ThreadTime | null;
}

interface CpuMark {
  table: CpuTable;
  /** The first pid's main thread. */
  thread: ThreadTime | null;
  benchUs: number;
  receiverMs: number;
  at: number;
}

interface ThroughputResult {
  phase: string;
  /** 1-minute load average when the phase started (other work on the machine). */
  load1m: number;
  /** Worker processes delivering (the first one's /metrics are reported). */
  workers: number;
  events: number;
  subscriptions: number;
  expected: number;
  /** Distinct deliveries received (event × subscription). */
  delivered: number;
  /** Requests received (a redelivery counts again). */
  received: number;
  complete: boolean;
  seconds: number;
  perSecond: number;
  emitSeconds: number;
  cpu: CpuUse;
  cpuMsPerDelivery: { worker: number | null; postgres: number; redis: number; receiver: number };
  worker: WorkerStats;
  pg: PgSampleSummary;
  database: { byStatus: Record<string, number>; attempts: number };
  /** pg_stat_database of the bench database during the phase, per delivery. */
  perDelivery: { commits: number; rowsInserted: number; rowsUpdated: number; rowsFetched: number };
}

interface WorkerStats {
  outcomes: Record<string, number>;
  attemptMs: ReturnType<typeof histogram>;
  lagMs: ReturnType<typeof histogram>;
  eventLoopLagP99Ms: number;
  /** First attempts by path (switchboard_first_attempts_total): inline, job, parked. */
  firstAttempts: Record<string, number>;
  /**
   * The relay's batches that published events (switchboard_relay_batch_seconds): how many,
   * events each on average, and their transaction's time (the model in
   * docs/benchmarks/delivery.md: deliveries/s ≈ cap ÷ (a batch's time + a POST's)).
   */
  relay: { batches: number; eventsPerBatch: number; batchMs: ReturnType<typeof histogram> };
  warnings: number;
  warningSamples: string[];
  profile: ProfileSummary | null;
}

interface RawResult {
  phase: string;
  requests: number;
  errors: number;
  concurrency: number;
  seconds: number;
  perSecond: number;
  /** Receiver-side first → last receipt, as for (a). */
  receiverPerSecond: number;
  latency: LatencySummary;
  cpu: CpuUse;
}

interface NoopResult {
  jobs: number;
  concurrency: number;
  addSeconds: number;
  seconds: number;
  perSecond: number;
  cpu: CpuUse;
}

interface LatencyResult {
  rate: number;
  events: number;
  warmupEvents: number;
  achievedRate: number;
  received: number;
  missing: number;
  duplicates: number;
  latency: LatencySummary;
  /** p50/p99 of the events scheduled in each 5 s window: a growing backlog shows here. */
  windows: { fromS: number; toS: number; p50: number; p99: number }[];
  /** Scheduled send time → COMMIT returned, in this process. */
  emit: LatencySummary;
  worker: WorkerStats;
}

interface FanoutRound {
  round: number;
  firstMs: number;
  allMs: number;
  received: number;
  complete: boolean;
}

interface Ctx {
  knex: Knex;
  benchUrl: string;
  dbName: string;
  receiver: ReceiverClient;
  certPem: string;
  workerEnv: NodeJS.ProcessEnv;
  profDir: string;
}

interface WorkerHandle {
  child: NodeChild;
  metricsPort: number;
  warnings: string[];
  scrape(): Promise<Samples>;
}

/**
 * A worker output line worth counting: a log line at level warn (40) or above, or anything
 * that is not a log line (a stack, Node's own warnings). Its info lines (at the shipped
 * level: periodic summaries, the reconciler's) are read and dropped, as a log shipper would.
 */
function isWarning(line: string): boolean {
  if (!line.trim()) return false;
  try {
    const level = (JSON.parse(line) as { level?: unknown }).level;
    return typeof level !== 'number' || level >= 40;
  } catch {
    return true;
  }
}

function eventInput(tenant: BenchTenant, tag: string, i: number) {
  return {
    tenantId: tenant.tenantId,
    receptionistId: tenant.receptionistId,
    type: 'call.started' as const,
    data: {
      call_id: `call_${tag}_${i}`,
      direction: 'inbound' as const,
      from: '+14155550100',
      to: '+14155550199',
      started_at: new Date().toISOString(),
    },
  };
}

function cpuMark(ctx: Ctx, pids: number[], receiverMs: number): CpuMark {
  const u = process.cpuUsage();
  return {
    table: cpuTable([...pids, ctx.receiver.child.pid]),
    thread: pids[0] === undefined ? null : threadTime(pids[0]),
    benchUs: u.user + u.system,
    receiverMs,
    at: nowMs(),
  };
}

async function cpuUse(
  ctx: Ctx,
  before: CpuMark,
  after: CpuMark,
  workerPids: number[] | null,
): Promise<CpuUse> {
  // Backends of the bench database now (the worker's pool) and Postgres' own processes.
  const { rows } = (await ctx.knex.raw(
    `SELECT pid, datname, backend_type FROM pg_stat_activity`,
  )) as { rows: { pid: number; datname: string | null; backend_type: string }[] };
  const ours = new Set(
    rows
      .filter(
        (r) =>
          r.datname === ctx.dbName || (r.datname === null && r.backend_type !== 'client backend'),
      )
      .map((r) => r.pid),
  );
  return {
    worker:
      workerPids === null
        ? null
        : cpuDelta(before.table, after.table, (pid) => workerPids.includes(pid)),
    workerSystem:
      workerPids === null
        ? null
        : cpuDelta(before.table, after.table, (pid) => workerPids.includes(pid), 'system'),
    receiver: r2((after.receiverMs - before.receiverMs) / 1000),
    bench: r2((after.benchUs - before.benchUs) / 1e6),
    postgresBench: cpuDelta(
      before.table,
      after.table,
      (pid, comm) => comm === 'postgres' && ours.has(pid),
    ),
    postgresAll: cpuDelta(before.table, after.table, (_pid, comm) => comm === 'postgres'),
    redis: cpuDelta(before.table, after.table, (_pid, comm) => comm === 'redis-server'),
    wallSeconds: r2((after.at - before.at) / 1000),
    thread: threadDelta(before.thread, after.thread),
  };
}

async function startWorker(ctx: Ctx, label: string): Promise<WorkerHandle> {
  const metricsPort = await freePort();
  const warnings: string[] = [];
  let partial = '';
  const child = startNodeChild(`worker (${label})`, serviceEntry('apps/worker/dist/main.js'), {
    env: { ...ctx.workerEnv, METRICS_PORT: String(metricsPort) },
    nodeArgs: CPU_PROF
      ? // One directory per worker: `--import tsx` runs its module hooks on a second thread,
        // which writes a profile of its own next to the main thread's.
        ['--cpu-prof', `--cpu-prof-dir=${join(ctx.profDir, `worker-${label}`)}`]
      : [],
    onOutput: (text) => {
      // Output comes in chunks; a line cut at a chunk's end is completed by the next one.
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (isWarning(line)) warnings.push(line.slice(0, 300));
    },
  });
  const url = `http://127.0.0.1:${metricsPort}/metrics`;
  const deadline = Date.now() + 60_000;
  let dead = false;
  void child.exited.then(() => {
    dead = true;
  });
  for (;;) {
    if (dead) throw new Error(`worker exited before it was ready:\n${child.tail()}`);
    try {
      if ((await httpGet(url, {}, 2000)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`worker not ready within 60 s:\n${child.tail()}`);
    await sleep(100);
  }
  return {
    child,
    metricsPort,
    warnings,
    async scrape() {
      const res = await httpGet(url, {}, 10_000);
      if (res.status !== 200) throw new Error(`worker /metrics → ${res.status}`);
      return parseMetrics(res.body);
    },
  };
}

/** Stops the worker (SIGTERM: it drains and exits) and summarises its CPU profile if any. */
async function stopWorker(
  ctx: Ctx,
  w: WorkerHandle,
  label: string,
): Promise<ProfileSummary | null> {
  await w.child.stop(20_000);
  if (!CPU_PROF) return null;
  return logProfile(join(ctx.profDir, `worker-${label}`), `worker ${label}`);
}

/** Summarises and prints the busiest thread's profile in `dir` (a child's `--cpu-prof-dir`). */
function logProfile(dir: string, what: string): ProfileSummary | null {
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    // none written
  }
  // The main thread is the one that did the work (the loader thread idles after startup).
  const summaries = files.map((f) => summarizeCpuProfile(join(dir, f), 25));
  const main = summaries.sort((a, b) => b.busyMs - a.busyMs)[0];
  if (!main) {
    log(`  no CPU profile was written for ${what}`);
    return null;
  }
  log(formatProfile(main));
  return main;
}

function workerStats(
  w: WorkerHandle,
  before: Samples,
  after: Samples,
  profile: ProfileSummary | null,
): WorkerStats {
  const outcomes: Record<string, number> = {};
  for (const o of ['succeeded', 'retry', 'failed', 'canceled']) {
    outcomes[o] =
      value(after, 'switchboard_deliveries_total', { outcome: o }) -
      value(before, 'switchboard_deliveries_total', { outcome: o });
  }
  const warnings = w.warnings.filter((l) => !l.startsWith('Debugger'));
  return {
    outcomes,
    attemptMs: histogram(before, after, 'switchboard_delivery_attempt_seconds', {
      result: 'success',
    }),
    lagMs: histogram(before, after, 'switchboard_delivery_lag_seconds'),
    eventLoopLagP99Ms: r2(
      value(after, 'switchboard_worker_nodejs_eventloop_lag_p99_seconds') * 1000,
    ),
    firstAttempts: Object.fromEntries(
      ['inline', 'job', 'parked'].map((path) => [
        path,
        value(after, 'switchboard_first_attempts_total', { path }) -
          value(before, 'switchboard_first_attempts_total', { path }),
      ]),
    ),
    relay: relayStats(before, after),
    warnings: warnings.length,
    warningSamples: warnings.slice(0, 5),
    profile,
  };
}

function relayStats(before: Samples, after: Samples): WorkerStats['relay'] {
  const batchMs = histogram(before, after, 'switchboard_relay_batch_seconds');
  const events =
    value(after, 'switchboard_events_relayed_total') -
    value(before, 'switchboard_events_relayed_total');
  return {
    batches: batchMs.count,
    eventsPerBatch: batchMs.count ? r2(events / batchMs.count) : 0,
    batchMs,
  };
}

async function emitBatches(
  ctx: Ctx,
  tenant: BenchTenant,
  tag: string,
  count: number,
): Promise<number> {
  const started = nowMs();
  const bar = progressBar(
    `(${tag}) emitting events, ${EMIT_BATCH}/transaction`.padEnd(46),
    count,
    'events',
  );
  for (let done = 0; done < count;) {
    const n = Math.min(EMIT_BATCH, count - done);
    await ctx.knex.transaction(async (trx) => {
      for (let i = 0; i < n; i++) await emit(trx, eventInput(tenant, tag, done + i));
    });
    done += n;
    bar.update(done);
  }
  bar.stop();
  return r2((nowMs() - started) / 1000);
}

async function deliveryCounts(
  ctx: Ctx,
  tenantId: string,
): Promise<{ byStatus: Record<string, number>; attempts: number }> {
  const rows = (await ctx
    .knex('webhook_deliveries')
    .where({ tenant_id: tenantId })
    .select('status')
    .count({ n: '*' })
    .groupBy('status')) as { status: string; n: string }[];
  const [{ n }] = (await ctx
    .knex('webhook_delivery_attempts_all as a')
    .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where('d.tenant_id', tenantId)
    .count({ n: '*' })) as [{ n: string }];
  return {
    byStatus: Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])),
    attempts: Number(n),
  };
}

type DbStats = Record<'commits' | 'inserted' | 'updated' | 'fetched', number>;

/** Counters of the bench database (the statistics collector lags by up to ~0.5 s). */
async function dbStats(ctx: Ctx): Promise<DbStats> {
  await ctx.knex.raw('SELECT pg_stat_clear_snapshot()');
  const { rows } = (await ctx.knex.raw(
    `SELECT xact_commit AS commits, tup_inserted AS inserted, tup_updated AS updated,
            tup_fetched AS fetched
       FROM pg_stat_database WHERE datname = ?`,
    [ctx.dbName],
  )) as { rows: Record<keyof DbStats, string>[] };
  const r = rows[0];
  return {
    commits: Number(r?.commits ?? 0),
    inserted: Number(r?.inserted ?? 0),
    updated: Number(r?.updated ?? 0),
    fetched: Number(r?.fetched ?? 0),
  };
}

function perDelivery(a: DbStats, b: DbStats, n: number): ThroughputResult['perDelivery'] {
  const per = (k: keyof DbStats) => r2((b[k] - a[k]) / Math.max(1, n));
  return {
    commits: per('commits'),
    rowsInserted: per('inserted'),
    rowsUpdated: per('updated'),
    rowsFetched: per('fetched'),
  };
}

/** (a): pre-emitted events, then one worker process delivers them all. */
async function deliveryPhase(
  ctx: Ctx,
  phase: string,
  tenant: BenchTenant,
  events: number,
  workers = 1,
): Promise<ThroughputResult> {
  const subs = tenant.subscriptionIds.length;
  const expected = events * subs;
  log(
    `\n» (a) ${phase}: ${fmt(events)} events × ${subs} subscription(s) = ${fmt(expected)} deliveries`,
  );
  const emitSeconds = await emitBatches(ctx, tenant, phase, events);
  const load1m = Number((loadavg()[0] ?? 0).toFixed(2));
  log(`  emitted in ${emitSeconds} s (worker not running yet); starting ${workers} worker(s)`);
  const ws: WorkerHandle[] = [];
  for (let i = 0; i < workers; i++)
    ws.push(await startWorker(ctx, i ? `${phase}-${i + 1}` : phase));
  const w = ws[0] as WorkerHandle;
  const pids = ws.map((x) => x.child.pid);
  const sampler = new PgSampler(ctx.benchUrl, ctx.dbName);
  await sampler.start();
  const m0 = await w.scrape();
  const c0 = cpuMark(ctx, pids, (await ctx.receiver.stats()).cpuMs);
  const db0 = await dbStats(ctx);
  const bar = progressBar(`(a) ${phase}: deliveries received`.padEnd(46), expected, 'deliveries');
  let prev = 0;
  let prevAt = nowMs();
  const s = await ctx.receiver.waitFor(phase, (st) => st.distinct >= expected, {
    timeoutMs: PHASE_TIMEOUT_MS,
    pollMs: 1000,
    tick: (st) => {
      const at = nowMs();
      const rate = ((st.distinct - prev) * 1000) / Math.max(1, at - prevAt);
      prev = st.distinct;
      prevAt = at;
      bar.update(Math.min(expected, st.distinct), { note: ` | ${fmt(rate)}/s now` });
    },
  });
  bar.stop();
  const c1 = cpuMark(ctx, pids, (await ctx.receiver.stats()).cpuMs);
  const db1 = await dbStats(ctx);
  const pg = await sampler.stop();
  const m1 = await w.scrape();
  const cpu = await cpuUse(ctx, c0, c1, pids);
  const profile = await stopWorker(ctx, w, phase);
  for (const [i, other] of ws.slice(1).entries()) await stopWorker(ctx, other, `${phase}-${i + 2}`);
  const seconds = (s.last - s.first) / 1000;
  const complete = s.distinct >= expected;
  if (!complete) log(`  TIMEOUT: only ${fmt(s.distinct)} of ${fmt(expected)} deliveries arrived`);
  const per = (sec: number | null) =>
    sec === null ? null : r2((sec * 1000) / Math.max(1, s.distinct));
  const result: ThroughputResult = {
    phase,
    load1m,
    workers,
    events,
    subscriptions: subs,
    expected,
    delivered: s.distinct,
    received: s.count,
    complete,
    seconds: r2(seconds),
    perSecond: r2(s.distinct / Math.max(seconds, 1e-3)),
    emitSeconds,
    cpu,
    cpuMsPerDelivery: {
      worker: per(cpu.worker),
      postgres: per(cpu.postgresBench) ?? 0,
      redis: per(cpu.redis) ?? 0,
      receiver: per(cpu.receiver) ?? 0,
    },
    worker: workerStats(w, m0, m1, profile),
    pg,
    database: await deliveryCounts(ctx, tenant.tenantId),
    perDelivery: perDelivery(db0, db1, s.distinct),
  };
  log(
    `  ${phase}: ${fmt(result.delivered)} deliveries in ${fmt(result.seconds, 1)} s = ${fmt(result.perSecond)}/s` +
      ` (worker CPU ${fmt(cpu.worker, 1)} s of which kernel ${fmt(cpu.workerSystem, 1)} s, postgres ${fmt(cpu.postgresBench, 1)} s, redis ${fmt(cpu.redis, 1)} s, receiver ${fmt(cpu.receiver, 1)} s over ${fmt(cpu.wallSeconds, 1)} s)` +
      threadLine('worker', cpu.thread),
  );
  return result;
}

/**
 * (b): the same POSTs without the product: keep-alive axios at the worker's concurrency, in a
 * process of its own (bench/delivery/raw-loop.ts) as the worker runs in its own.
 */
async function rawPhase(ctx: Ctx, phase: string, count: number): Promise<RawResult> {
  log(`\n» (b) ${phase}: raw axios POST loop, ${fmt(count)} requests, concurrency ${CONCURRENCY}`);
  // A body and headers like a real delivery's: a call.started envelope, signed.
  const envelope = buildEnvelope({
    id: 'evt_bench',
    type: 'call.started',
    receptionistId: 'rcp_bench',
    data: eventInput({ tenantId: 't', receptionistId: 'r', subscriptionIds: [] }, 'raw', 0).data,
    createdAt: new Date(),
    livemode: true,
  });
  const body = JSON.stringify(envelope);
  const signed = signPayload({ secret: generateSigningSecret(), eventId: 'evt_bench', body });
  const child = startNodeChild(`raw-${phase}`, join(ROOT, 'bench', 'delivery', 'raw-loop.ts'), {
    ipc: true,
    // Profiled like the worker, so that their HTTP clients' shares can be compared.
    nodeArgs: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(ctx.profDir, `raw-${phase}`)}`] : [],
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: ctx.workerEnv.NODE_EXTRA_CA_CERTS,
      RAW_URL: `https://127.0.0.1:${ctx.receiver.port}/p/${phase}/0`,
      RAW_COUNT: String(count),
      RAW_CONCURRENCY: String(CONCURRENCY),
      RAW_BODY: body,
      RAW_HEADERS: JSON.stringify({
        ...signed,
        'Content-Type': 'application/json',
        'User-Agent': 'Switchboard-Webhooks/1',
      }),
      RAW_ID_PREFIX: `raw_${phase}_`,
    },
  });
  const bar = progressBar(`(b) ${phase}: raw POSTs`.padEnd(46), count, 'requests');
  const c0 = cpuMark(ctx, [], (await ctx.receiver.stats()).cpuMs);
  const end = await new Promise<RawLoopDone>((resolve, reject) => {
    child.proc.on('message', (m: FromRawLoop) => {
      if (m.kind === 'progress') bar.update(m.done);
      else resolve(m);
    });
    void child.exited.then((how) =>
      reject(new Error(`(b) ${phase}: the raw loop exited (${how}): ${child.tail()}`)),
    );
  });
  const c1 = cpuMark(ctx, [], (await ctx.receiver.stats()).cpuMs);
  bar.update(end.done);
  bar.stop();
  await child.exited;
  if (CPU_PROF) logProfile(join(ctx.profDir, `raw-${phase}`), `raw loop ${phase}`);
  if (end.errors >= 100) throw new Error(`(b) ${phase}: ${end.errors} failed requests`);
  const s = await ctx.receiver.phase(phase);
  const rs = (s.last - s.first) / 1000;
  const result: RawResult = {
    phase,
    requests: end.done,
    errors: end.errors,
    concurrency: CONCURRENCY,
    seconds: r2(end.seconds),
    perSecond: r2(end.done / end.seconds),
    receiverPerSecond: r2(s.distinct / Math.max(rs, 1e-3)),
    latency: summarize(end.latenciesMs),
    // The loop's own CPU as it measured it: the `worker` column of (b).
    cpu: {
      ...(await cpuUse(ctx, c0, c1, null)),
      worker: r2(end.cpuSeconds),
      workerSystem: r2(end.cpuSystemSeconds),
      thread: end.thread,
    },
  };
  log(
    `  ${phase}: ${fmt(end.done)} POSTs in ${fmt(end.seconds, 1)} s = ${fmt(result.perSecond)}/s (receiver side ${fmt(result.receiverPerSecond)}/s), p50 ${fmt(result.latency.p50, 1)} ms, p99 ${fmt(result.latency.p99, 1)} ms, ${end.errors} errors; loop CPU ${fmt(result.cpu.worker, 1)} s` +
      threadLine('loop', end.thread),
  );
  return result;
}

/** (c): BullMQ alone: a no-op processor draining pre-added jobs. */
async function noopPhase(ctx: Ctx): Promise<NoopResult> {
  const concurrency = Math.max(10, CONCURRENCY);
  log(`\n» (c) BullMQ no-op worker: ${fmt(NOOP_JOBS)} jobs, concurrency ${concurrency}`);
  const producer = createRedis(REDIS_URL, 'worker');
  const consumer = producer.duplicate();
  const queue = new Queue('noop', {
    connection: producer,
    prefix: NOOP_PREFIX,
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
  });
  let worker: Worker | null = null;
  try {
    const addStarted = nowMs();
    const addBar = progressBar('(c) adding jobs (addBulk of 1000)'.padEnd(46), NOOP_JOBS, 'jobs');
    for (let i = 0; i < NOOP_JOBS; i += 1000) {
      const n = Math.min(1000, NOOP_JOBS - i);
      await queue.addBulk(
        Array.from({ length: n }, (_, k) => ({
          name: 'noop',
          data: { v: 1, i: i + k },
          opts: { jobId: `noop-${i + k}` },
        })),
      );
      addBar.update(i + n);
    }
    addBar.stop();
    const addSeconds = r2((nowMs() - addStarted) / 1000);
    let completed = 0;
    let first = 0;
    let last = 0;
    const bar = progressBar('(c) no-op jobs completed'.padEnd(46), NOOP_JOBS, 'jobs');
    const c0 = cpuMark(ctx, [], (await ctx.receiver.stats()).cpuMs);
    const finished = new Promise<void>((resolve) => {
      worker = new Worker(
        'noop',
        async () => {
          if (!first) first = nowMs();
        },
        { connection: consumer, prefix: NOOP_PREFIX, concurrency },
      );
      worker.on('error', () => undefined);
      worker.on('completed', () => {
        completed++;
        if (completed >= NOOP_JOBS) {
          last = nowMs();
          resolve();
        }
      });
    });
    const ticker = setInterval(() => bar.update(completed), 1000);
    const timedOut = await Promise.race([
      finished.then(() => false),
      sleep(PHASE_TIMEOUT_MS).then(() => true),
    ]);
    clearInterval(ticker);
    bar.update(completed);
    bar.stop();
    if (timedOut) throw new Error(`(c) only ${completed} of ${NOOP_JOBS} jobs completed in time`);
    const c1 = cpuMark(ctx, [], (await ctx.receiver.stats()).cpuMs);
    const seconds = (last - first) / 1000;
    const result: NoopResult = {
      jobs: NOOP_JOBS,
      concurrency,
      addSeconds,
      seconds: r2(seconds),
      perSecond: r2(NOOP_JOBS / seconds),
      cpu: await cpuUse(ctx, c0, c1, null),
    };
    log(`  no-op: ${fmt(NOOP_JOBS)} jobs in ${fmt(seconds, 1)} s = ${fmt(result.perSecond)}/s`);
    return result;
  } finally {
    const w = worker as Worker | null;
    await w?.close();
    await queue.close();
    await Promise.all([closeRedis(producer), closeRedis(consumer)]);
  }
}

/**
 * One open-loop latency series: `events` events (after `warmup` uncounted ones) at `rate`/s,
 * each emitted in its own transaction at its scheduled time whether or not earlier ones have
 * committed or been delivered, so a slow pipeline shows as latency rather than as a lower
 * send rate.
 */
async function latencySeries(
  ctx: Ctx,
  w: WorkerHandle,
  m0: Samples,
  tenant: BenchTenant,
  phase: string,
  rate: number,
  events: number,
  warmup: number,
): Promise<{ result: LatencyResult; m1: Samples }> {
  const total = warmup + events;
  log(
    `\n» (${phase}) end-to-end latency: ${fmt(events)} events at ${rate}/s (after ${warmup} warm-up events), one per transaction, 1 subscription`,
  );
  const interval = 1000 / rate;
  const commits = new Map<string, { at: number; i: number }>();
  const receipts = new Map<string, number>();
  const emitLat: number[] = [];
  let duplicates = 0;
  let launched = 0;
  let failures = 0;
  const pending: Promise<void>[] = [];
  const absorb = async () => {
    for (const [p, , id, at] of await ctx.receiver.drain()) {
      if (p !== phase) continue;
      if (receipts.has(id)) duplicates++;
      else receipts.set(id, at);
    }
  };
  const bar = progressBar(`(${phase}) events received`.padEnd(46), total, 'events');
  const ticker = setInterval(() => {
    void absorb().then(() =>
      bar.update(receipts.size, { note: ` | emitted ${launched}, committed ${commits.size}` }),
    );
  }, 1000);
  const t0 = nowMs();
  const one = async (i: number, scheduled: number) => {
    try {
      const id = await ctx.knex.transaction((trx) => emit(trx, eventInput(tenant, phase, i)));
      const at = nowMs();
      commits.set(id, { at, i });
      if (i >= warmup) emitLat.push(at - scheduled);
    } catch {
      failures++;
    }
  };
  while (launched < total) {
    const due = Math.min(total, Math.floor((nowMs() - t0) / interval) + 1);
    while (launched < due) {
      const i = launched++;
      pending.push(one(i, t0 + i * interval));
    }
    await sleep(Math.max(1, t0 + launched * interval - nowMs()));
  }
  const lastScheduled = t0 + (total - 1) * interval;
  await Promise.all(pending);
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    await absorb();
    if ([...commits.keys()].every((id) => receipts.has(id))) break;
    await sleep(250);
  }
  clearInterval(ticker);
  bar.update(receipts.size);
  bar.stop();
  const lat: number[] = [];
  const byWindow = new Map<number, number[]>();
  let missing = 0;
  for (const [id, c] of commits) {
    if (c.i < warmup) continue;
    const at = receipts.get(id);
    if (at === undefined) {
      missing++;
      continue;
    }
    lat.push(at - c.at);
    const window = Math.floor(((c.i - warmup) * interval) / 5000);
    const list = byWindow.get(window) ?? [];
    list.push(at - c.at);
    byWindow.set(window, list);
  }
  const m1 = await w.scrape();
  const result: LatencyResult = {
    rate,
    events,
    warmupEvents: warmup,
    achievedRate: r2(((total - 1) * 1000) / Math.max(1, lastScheduled - t0)),
    received: lat.length,
    missing: missing + failures,
    duplicates,
    latency: summarize(lat),
    windows: [...byWindow]
      .sort((a, b) => a[0] - b[0])
      .map(([k, list]) => {
        const sm = summarize(list);
        return { fromS: k * 5, toS: k * 5 + 5, p50: sm.p50, p99: sm.p99 };
      }),
    emit: summarize(emitLat),
    worker: workerStats(w, m0, m1, null),
  };
  log(
    `  latency ingest → receipt: p50 ${fmt(result.latency.p50, 1)} ms, p90 ${fmt(result.latency.p90, 1)} ms, p99 ${fmt(result.latency.p99, 1)} ms, max ${fmt(result.latency.max, 1)} ms; ${missing} missing, ${failures} emit failures`,
  );
  log(
    `  p50 / p99 by 5 s of schedule: ${result.windows.map((x) => `${fmt(x.p50, 0)}/${fmt(x.p99, 0)}`).join(', ')} ms`,
  );
  return { result, m1 };
}

/** (d) at the target rate, the same at a low rate, then (e), on one worker process. */
async function latencyPhases(
  ctx: Ctx,
  tenantD: BenchTenant | null,
  tenantDl: BenchTenant | null,
  tenantE: BenchTenant | null,
): Promise<{
  latency: LatencyResult | null;
  latencyLow: LatencyResult | null;
  fanout: FanoutRound[];
  fanoutWorker: WorkerStats | null;
}> {
  const w = await startWorker(ctx, 'd-e');
  await sleep(1000);
  let latency: LatencyResult | null = null;
  let latencyLow: LatencyResult | null = null;
  const fanout: FanoutRound[] = [];
  let m = await w.scrape();
  if (tenantD) {
    const warmup = Math.min(RATE, 200); // one second at the rate
    const d = await latencySeries(ctx, w, m, tenantD, 'd', RATE, LATENCY_EVENTS, warmup);
    latency = d.result;
    m = d.m1;
  }
  if (tenantDl) {
    await sleep(2000);
    const warmup = Math.min(LOW_RATE, 200);
    const d = await latencySeries(ctx, w, m, tenantDl, 'dl', LOW_RATE, LOW_RATE_EVENTS, warmup);
    latencyLow = d.result;
    m = d.m1;
  }
  let fanoutWorker: WorkerStats | null = null;
  if (tenantE) {
    log(`\n» (e) 1 event → ${FANOUT_SUBS} subscriptions, ${FANOUT_REPEATS} times`);
    await sleep(1000);
    await ctx.receiver.drain();
    for (let round = 1; round <= FANOUT_REPEATS; round++) {
      const id = await ctx.knex.transaction((trx) => emit(trx, eventInput(tenantE, 'e', round)));
      const commit = nowMs();
      const subs = new Map<string, number>();
      const deadline = Date.now() + 30_000;
      while (subs.size < FANOUT_SUBS && Date.now() < deadline) {
        await sleep(10);
        for (const [phase, sub, eid, at] of await ctx.receiver.drain()) {
          if (phase === 'e' && eid === id && !subs.has(sub)) subs.set(sub, at);
        }
      }
      const times = [...subs.values()];
      const r: FanoutRound = {
        round,
        firstMs: times.length ? r2(Math.min(...times) - commit) : Number.NaN,
        allMs: times.length ? r2(Math.max(...times) - commit) : Number.NaN,
        received: subs.size,
        complete: subs.size >= FANOUT_SUBS,
      };
      fanout.push(r);
      log(
        `  round ${round}: first receipt after ${fmt(r.firstMs, 1)} ms, all ${r.received}/${FANOUT_SUBS} after ${fmt(r.allMs, 1)} ms`,
      );
      await sleep(1000);
    }
    const m1 = await w.scrape();
    fanoutWorker = workerStats(w, m, m1, null);
  }
  const profile = await stopWorker(ctx, w, 'd-e');
  const last = fanoutWorker ?? latencyLow?.worker ?? latency?.worker;
  if (last) last.profile = profile;
  return { latency, latencyLow, fanout, fanoutWorker };
}

let cleanup: () => Promise<void> = async () => undefined;
let interrupted = false;

async function main(): Promise<number> {
  installChildCleanup(() => {
    interrupted = true;
    return cleanup();
  });
  if (new URL(REDIS_URL).hostname !== '127.0.0.1') {
    throw new Error('the benchmark only talks to Redis on 127.0.0.1');
  }
  const startedAt = new Date();
  const machine = machineInfo();
  log(
    `delivery benchmark: nproc ${machine.nproc}, node ${machine.node}, load ${machine.loadavg.join(' ')}; WORKER_CONCURRENCY=${CONCURRENCY}; phases ${[...PHASES].join(',')}${CPU_PROF ? '; worker under --cpu-prof' : ''}`,
  );
  if ((machine.loadavg[0] ?? 0) > 0.5) {
    log(
      `  note: load average is ${machine.loadavg.join(' ')}: other work on this machine makes the figures noisy`,
    );
  }

  const tracing = await startBenchTracing(TRACING);
  log(`  tracing: ${TRACING}`);
  const tmp = mkdtempSync(join(tmpdir(), 'sb-bench-delivery-'));
  const profDir = join(ROOT, 'bench', '.results', `delivery-prof-${RUN}`);
  if (CPU_PROF) mkdirSync(profDir, { recursive: true });
  const cert = generateCertificate('IP:127.0.0.1');
  const certFile = join(tmp, 'cert.pem');
  const keyFile = join(tmp, 'key.pem');
  writeFileSync(certFile, cert.cert);
  writeFileSync(keyFile, cert.key, { mode: 0o600 });

  const redis: Redis = createRedis(REDIS_URL, 'worker');
  let knex: Knex | null = null;
  let dbCreated = false;
  let cleaning: Promise<void> | null = null;
  // One cleanup, however many paths ask for it (normal end, failure, signal): all wait for it.
  cleanup = () => (cleaning ??= cleanUp());
  const cleanUp = async (): Promise<void> => {
    const deleted = await deleteRedisKeys(redis, `{sbbd-${RUN}*`).catch(() => -1);
    log(`  removed ${deleted} Redis keys of this run (${PREFIX}, ${NOOP_PREFIX})`);
    await closeRedis(redis);
    await knex?.destroy().catch(() => undefined);
    if (dbCreated && !KEEP_DB) {
      await dropDatabase().catch((err: unknown) =>
        log(`  could not drop the bench database: ${String(err)}`),
      );
      log('  dropped the bench database');
    } else if (dbCreated) log('  kept the bench database (BENCH_KEEP_DB=1)');
    rmSync(tmp, { recursive: true, force: true });
  };

  try {
    await redis.ping();
    const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
    const stale = await deleteRedisKeys(redis, '{sbbd-*');
    if (stale) log(`  removed ${stale} Redis keys left by an earlier run of this benchmark`);

    await compileForBench();
    const receiver = await step('starting the HTTPS receiver', () =>
      ReceiverClient.start({
        ...process.env,
        NODE_ENV: 'production',
        RECEIVER_KEY_FILE: keyFile,
        RECEIVER_CERT_FILE: certFile,
        RECEIVER_TRACE: 'd,dl,e,dw',
        RECEIVER_SLOW: 's2',
      }),
    );
    const { benchUrl, dbName } = await step('recreating the bench database', () =>
      recreateDatabase(PARTITION_DAYS),
    );
    dbCreated = true;
    knex = createKnex(benchUrl, { poolMax: 10 });
    const pgVersion = (
      (await knex.raw('SHOW server_version')) as { rows: { server_version: string }[] }
    ).rows[0]?.server_version;
    const encryptionKey = randomBytes(32);
    const urlFor = (phase: string) => (i: number) =>
      `https://127.0.0.1:${receiver.port}/p/${phase}/${i}`;
    const k = knex;
    const tenants = await step('creating tenants and subscriptions', async () => ({
      a1: PHASES.has('a') ? await createTenant(k, encryptionKey, 'a1', 1, urlFor('a1')) : null,
      a1x2: PHASES.has('x')
        ? await createTenant(k, encryptionKey, 'a1x2', 1, urlFor('a1x2'))
        : null,
      a10: PHASES.has('a')
        ? await createTenant(k, encryptionKey, 'a10', SUBS_10, urlFor('a10'))
        : null,
      d: PHASES.has('d') ? await createTenant(k, encryptionKey, 'd', 1, urlFor('d')) : null,
      dl: PHASES.has('d') ? await createTenant(k, encryptionKey, 'dl', 1, urlFor('dl')) : null,
      e: PHASES.has('e')
        ? await createTenant(k, encryptionKey, 'e', FANOUT_SUBS, urlFor('e'))
        : null,
      s2: PHASES.has('s') ? await createTenant(k, encryptionKey, 's2', 1, urlFor('s2')) : null,
    }));
    const ctx: Ctx = {
      knex,
      benchUrl,
      dbName,
      receiver,
      certPem: cert.cert,
      profDir,
      workerEnv: {
        ...process.env,
        ...tracing.env,
        // Not `production`: that refuses WEBHOOK_ALLOW_PRIVATE_TARGETS, which a receiver on this
        // machine needs (packages/config); nothing else of the worker reads NODE_ENV.
        NODE_ENV: 'development',
        DATABASE_URL: benchUrl,
        REDIS_URL,
        QUEUE_PREFIX: PREFIX,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        NODE_EXTRA_CA_CERTS: certFile,
        // The shipped default (info): its lines are read and dropped as a log shipper would.
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        WORKER_CONCURRENCY: String(CONCURRENCY),
        ...(process.env.BENCH_WORKER_NODE_OPTIONS
          ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS }
          : {}),
        INGEST_TOKEN: randomBytes(24).toString('hex'),
        CURSOR_SECRET: randomBytes(24).toString('hex'),
        SECRET_ENCRYPTION_KEY: encryptionKey.toString('base64'),
      },
    };

    const raw: RawResult[] = [];
    let noop: NoopResult | null = null;
    const throughput: ThroughputResult[] = [];
    if (PHASES.has('b')) raw.push(await rawPhase(ctx, 'b1', RAW_REQUESTS));
    if (PHASES.has('c')) noop = await noopPhase(ctx);
    if (tenants.a1) throughput.push(await deliveryPhase(ctx, 'a1', tenants.a1, EVENTS_1));
    if (tenants.a10) throughput.push(await deliveryPhase(ctx, 'a10', tenants.a10, EVENTS_10));
    if (tenants.a1x2) {
      throughput.push(await deliveryPhase(ctx, 'a1x2', tenants.a1x2, EVENTS_1, 2));
    }
    if (tenants.s2) throughput.push(await deliveryPhase(ctx, 's2', tenants.s2, DUP_EVENTS, 2));
    if (PHASES.has('b')) raw.push(await rawPhase(ctx, 'b2', RAW_REQUESTS));
    const { latency, latencyLow, fanout, fanoutWorker } =
      tenants.d || tenants.e
        ? await latencyPhases(ctx, tenants.d, tenants.dl, tenants.e)
        : { latency: null, latencyLow: null, fanout: [], fanoutWorker: null };

    // Report.
    const rawRate = raw.length ? raw.reduce((s, r) => s + r.perSecond, 0) / raw.length : null;
    const ratio = (a: number | undefined, b: number | null | undefined) =>
      a !== undefined && b ? r2(a / b) : null;
    const a1 = throughput.find((t) => t.phase === 'a1');
    const a10 = throughput.find((t) => t.phase === 'a10');
    const ratios = {
      a1OverRaw: ratio(a1?.perSecond, rawRate),
      a10OverRaw: ratio(a10?.perSecond, rawRate),
      a1OverNoop: ratio(a1?.perSecond, noop?.perSecond),
      a10OverNoop: ratio(a10?.perSecond, noop?.perSecond),
    };
    const targets = {
      deliveriesVsRaw1Sub: ratios.a1OverRaw === null ? null : ratios.a1OverRaw >= TARGET_RATIO,
      deliveriesVsRaw10Subs: ratios.a10OverRaw === null ? null : ratios.a10OverRaw >= TARGET_RATIO,
      latencyP50: latency ? latency.missing === 0 && latency.latency.p50 <= TARGET_P50_MS : null,
      latencyP99: latency ? latency.missing === 0 && latency.latency.p99 <= TARGET_P99_MS : null,
      fanout100: fanout.length
        ? fanout.every((r) => r.complete && r.allMs <= TARGET_FANOUT_MS)
        : null,
    };
    const cpuCols = (c: CpuUse, n: number) => [
      fmt(c.worker === null ? c.bench : c.worker, 1),
      fmt(c.postgresBench, 1),
      fmt(c.redis, 1),
      fmt(c.receiver, 1),
      fmt((((c.worker ?? c.bench) + c.postgresBench + c.redis + c.receiver) * 1000) / n, 2),
    ];
    // The engine's own CPU per delivery: the worker's CPU per delivery minus what the raw
    // loop (the same HTTP client, its own process) spends per POST.
    const rawCpuMs = raw.length
      ? raw.reduce((sum, r) => sum + ((r.cpu.worker ?? 0) * 1000) / r.requests, 0) / raw.length
      : null;
    const engineCpuMs = throughput.map((t) => ({
      phase: t.phase,
      workerMs: t.cpu.worker === null ? null : r2((t.cpu.worker * 1000) / t.delivered),
      engineMs:
        t.cpu.worker === null || rawCpuMs === null
          ? null
          : Number(((t.cpu.worker * 1000) / t.delivered - rawCpuMs).toFixed(3)),
    }));
    const report = [
      '',
      'Event delivery benchmark (issue 5)',
      `machine: ${machine.nproc} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}, PostgreSQL ${pgVersion}, Redis ${redisVersion}; load before: ${machine.loadavg.join(' ')}`,
      `worker: one process, WORKER_CONCURRENCY=${CONCURRENCY} (fan-out concurrency ${Math.max(2, Math.ceil(CONCURRENCY / 2))}); (a) events emitted before the worker starts, rate = deliveries / (last − first receipt)${PARTITION_DAYS > 0 ? `; ${PARTITION_DAYS} daily partitions added to each daily table` : ''}`,
      table([
        [
          'phase',
          'count',
          'seconds',
          'per second',
          'CPU s: load/worker',
          'postgres',
          'redis',
          'receiver',
          'CPU ms/item',
        ],
        ...throughput.map((t) => [
          `(a) ${t.workers === 1 ? 'worker' : `${t.workers} workers`}, ${fmt(t.events)} events × ${t.subscriptions} sub${t.complete ? '' : ' (INCOMPLETE)'}`,
          fmt(t.delivered),
          fmt(t.seconds, 1),
          fmt(t.perSecond),
          ...cpuCols(t.cpu, t.delivered),
        ]),
        ...raw.map((r) => [
          `(b) raw axios POST loop (${r.phase})`,
          fmt(r.requests),
          fmt(r.seconds, 1),
          fmt(r.perSecond),
          ...cpuCols(r.cpu, r.requests),
        ]),
        ...(noop
          ? [
              [
                '(c) BullMQ no-op worker',
                fmt(noop.jobs),
                fmt(noop.seconds, 1),
                fmt(noop.perSecond),
                ...cpuCols(noop.cpu, noop.jobs),
              ],
            ]
          : []),
      ]),
      '',
      `(a)/(b), 1 subscription:   ${fmt(ratios.a1OverRaw, 2)} × (target ≥ ${TARGET_RATIO}: ${targets.deliveriesVsRaw1Sub === null ? 'n/a' : met(targets.deliveriesVsRaw1Sub)}); (b) = mean of ${raw.length} run(s), ${fmt(rawRate)}/s`,
      `(a)/(b), 10 subscriptions: ${fmt(ratios.a10OverRaw, 2)} × (target ≥ ${TARGET_RATIO}: ${targets.deliveriesVsRaw10Subs === null ? 'n/a' : met(targets.deliveriesVsRaw10Subs)})`,
      `(a)/(c): ${fmt(ratios.a1OverNoop, 3)} × (1 sub), ${fmt(ratios.a10OverNoop, 3)} × (10 subs)`,
      `engine CPU per delivery (worker CPU per delivery − raw loop CPU per POST, ${fmt(rawCpuMs, 3)} ms; target ≤ ${TARGET_ENGINE_CPU_MS} ms): ${engineCpuMs.map((e) => `${e.phase} ${fmt(e.engineMs, 3)} ms (worker ${fmt(e.workerMs, 3)})`).join(', ')}`,
      ...throughput.map(
        (t) =>
          `  (a) ${t.phase}: per delivery ${fmt(t.perDelivery.commits, 1)} Postgres commits, ${fmt(t.perDelivery.rowsInserted, 1)} rows inserted, ${fmt(t.perDelivery.rowsUpdated, 1)} updated; attempt (HTTP POST) mean ${fmt(t.worker.attemptMs.meanMs, 1)} ms, p99 ≈ ${fmt(t.worker.attemptMs.p99Ms, 0)} ms; outcomes ${JSON.stringify(t.worker.outcomes)}; first attempts ${JSON.stringify(t.worker.firstAttempts)}; relay ${fmt(t.worker.relay.batches)} batches of ${fmt(t.worker.relay.eventsPerBatch, 1)} events, ${fmt(t.worker.relay.batchMs.meanMs, 1)} ms each (p99 ≈ ${fmt(t.worker.relay.batchMs.p99Ms, 0)} ms); rows ${JSON.stringify(t.database.byStatus)}, ${fmt(t.database.attempts)} attempts; ${t.received - t.delivered} duplicate receipts; ${t.worker.warnings} worker warnings`,
      ),
      ...(latency
        ? [
            '',
            `(d) ingest → receipt at ${RATE} events/s (achieved ${fmt(latency.achievedRate, 1)}/s), ${fmt(latency.received)} events, 1 subscription:`,
            `    p50 ${fmt(latency.latency.p50, 1)} ms (target ≤ ${TARGET_P50_MS}: ${met(targets.latencyP50 === true)}), p90 ${fmt(latency.latency.p90, 1)} ms, p99 ${fmt(latency.latency.p99, 1)} ms (target ≤ ${TARGET_P99_MS}: ${met(targets.latencyP99 === true)}), max ${fmt(latency.latency.max, 1)} ms; ${latency.missing} missing, ${latency.duplicates} duplicates`,
            `    emit transaction (scheduled → COMMIT returned): p50 ${fmt(latency.emit.p50, 1)} ms, p99 ${fmt(latency.emit.p99, 1)} ms; worker's delivery lag histogram p50 ≈ ${fmt(latency.worker.lagMs.p50Ms, 0)} ms, p99 ≈ ${fmt(latency.worker.lagMs.p99Ms, 0)} ms`,
            `    p50/p99 by 5 s of schedule: ${latency.windows.map((x) => `${fmt(x.p50, 0)}/${fmt(x.p99, 0)}`).join(', ')} ms`,
          ]
        : []),
      ...(latencyLow
        ? [
            `(d, low rate) the same at ${LOW_RATE} events/s, ${fmt(latencyLow.received)} events: p50 ${fmt(latencyLow.latency.p50, 1)} ms, p90 ${fmt(latencyLow.latency.p90, 1)} ms, p99 ${fmt(latencyLow.latency.p99, 1)} ms, max ${fmt(latencyLow.latency.max, 1)} ms; ${latencyLow.missing} missing`,
          ]
        : []),
      ...(fanout.length
        ? [
            '',
            `(e) 1 event → ${FANOUT_SUBS} subscriptions, commit → all received (target ≤ ${TARGET_FANOUT_MS} ms: ${met(targets.fanout100 === true)}):`,
            `    ${fanout.map((r) => `${fmt(r.allMs, 0)} ms${r.complete ? '' : ` (only ${r.received})`}`).join(', ')}; first receipt ${fanout.map((r) => fmt(r.firstMs, 0)).join(', ')} ms`,
          ]
        : []),
    ];
    process.stdout.write(`${report.join('\n')}\n`);
    for (const t of throughput) {
      log(
        `\n(a) ${t.phase}: pg_stat_activity of the bench database, mean connections (${t.pg.samples} samples):`,
      );
      for (const s of t.pg.states) log(`    ${fmt(s.meanConnections, 2).padStart(6)}  ${s.state}`);
      for (const s of t.pg.statements) {
        log(`    ${fmt(s.meanConnections, 2).padStart(6)}  ${s.statement}  [${s.waits}]`);
      }
    }

    const dir = join(ROOT, 'bench', '.results');
    mkdirSync(dir, { recursive: true });
    const stamp = startedAt
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z');
    const file = join(dir, `delivery-${stamp}.json`);
    const result = {
      benchmark: 'delivery',
      command: 'npm run bench:delivery',
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      loadAfter: loadavg().map((n) => Number(n.toFixed(2))),
      versions: { postgres: pgVersion, redis: redisVersion },
      settings: {
        workerConcurrency: CONCURRENCY,
        events1Sub: EVENTS_1,
        events10Subs: EVENTS_10,
        rawRequests: RAW_REQUESTS,
        noopJobs: NOOP_JOBS,
        rate: RATE,
        latencyEvents: LATENCY_EVENTS,
        lowRate: LOW_RATE,
        lowRateEvents: LOW_RATE_EVENTS,
        fanoutSubscriptions: FANOUT_SUBS,
        fanoutRepeats: FANOUT_REPEATS,
        emitBatch: EMIT_BATCH,
        cpuProfile: CPU_PROF,
        partitionDays: PARTITION_DAYS,
        phases: [...PHASES],
        tracing: TRACING,
        emittedBeforeWorkerStarts: true,
        database: KEEP_DB ? `${dbName} (kept)` : `${dbName} (dropped at the end)`,
      },
      throughput,
      raw,
      rawMeanPerSecond: rawRate === null ? null : r2(rawRate),
      noop,
      ratios,
      rawCpuMsPerPost: rawCpuMs === null ? null : Number(rawCpuMs.toFixed(3)),
      engineCpuMs,
      latency,
      latencyLow,
      fanout,
      fanoutWorker,
      targets,
    };
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    log(`\nresults written to ${relative(ROOT, file)}`);
    if (TRACING === 'on') log(`  tracing: the sink received ${tracing.exports()} OTLP exports`);
    return 0;
  } finally {
    await tracing.close();
    await stopAllChildren();
    closeHttpAgent();
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    // After Ctrl-C the signal handler cleans up and exits; the phase it cut off fails here.
    if (!interrupted) {
      log(
        `\ndelivery benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
    }
    await stopAllChildren();
    await cleanup().catch(() => undefined);
    process.exit(interrupted ? 130 : 1);
  },
);
