/**
 * Event streams (issue 46): `npm run bench:streams`.
 *
 * 1. Recreates `switchboard_bench_streams`: migrated, BENCH_STREAM_TENANTS tenants (10), each
 *    with a ready receptionist and as many read keys as its streams need at the API's default
 *    limit of 5 streams per key (EVENT_STREAM_MAX_PER_KEY: the limit is not raised).
 * 2. Starts ONE API process, compiled as it ships, at its defaults (LOG_LEVEL info, its
 *    stdout read and dropped as a log shipper would; every EVENT_STREAM_* setting at its
 *    default). No worker: nothing here needs one, a stream reads Postgres.
 * 3. Baseline: one stream open (from its own load process), after a warm-up; `call.started`
 *    messages ingested at BENCH_STREAM_RATE/s (20) for BENCH_STREAM_SECONDS (30), all of
 *    the streamed tenant, as the voice platform reports them (POST
 *    /internal/v1/telephony/events with INGEST_TOKEN; each emits one `call.started` event).
 * 4. The API's resident memory (VmRSS) with no stream open; then BENCH_STREAMS (1,000)
 *    streams opened from BENCH_STREAM_LISTENERS load processes (2), spread over the tenants,
 *    each group of 200 from its own loopback source address (the API caps connections per
 *    client address at 256); once all are open and BENCH_STREAM_SETTLE seconds (30: two
 *    heartbeats and lease renewals) have passed, VmRSS again: memory per stream = delta / N.
 * 5. The same ingestion, the k-th message for tenant k mod tenants: every stream of an
 *    event's tenant must receive it. Latency = the time the stream's load process read it −
 *    the time the ingest request was sent (also − its 202, the commit acknowledged), over
 *    every (event, stream) pair. Every event in the database at the end must have reached
 *    every stream of its tenant: receipts missing, repeated or of another tenant, and
 *    ingest answers other than 202, are counted and fail the run. Also per phase: the CPU
 *    seconds of the API and of the bench database's backends, and the transactions
 *    committed in that database per event (pg_stat_database, read 11 s after the phase
 *    so that every backend flushed its counts: the ingestion's, the streams' reads, and
 *    the idle streams' polls and lease renewals, whose rate alone is reported from step 4).
 * 6. Prints the table, writes bench/.results/streams-<timestamp>.json, drops the database
 *    and deletes the run's Redis keys (also on Ctrl-C).
 *
 * Knobs (env): BENCH_STREAMS (1000), BENCH_STREAM_TENANTS (10), BENCH_STREAM_RATE (20),
 * BENCH_STREAM_SECONDS (30), BENCH_STREAM_SETTLE (30), BENCH_STREAM_LISTENERS (2),
 * BENCH_KEEP_DB=1, BENCH_STREAMS_DATABASE_NAME, REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { createKnex, type Knex } from '@switchboard/db';
import { closeRedis, createRedis } from '@switchboard/queues';
import {
  installChildCleanup,
  startTsChild,
  stopAllChildren,
  waitForHttp,
  type Child,
} from './lib/children';
import { compileForBench, serviceEntry } from './lib/compiled';
import { envInt } from './lib/env';
import { closeHttpAgent, freePort } from './lib/http';
import { machineInfo } from './lib/machine';
import { cpuSecondsOf, cpuSnapshot, largestOfGroup, vmRssBytes } from './lib/proc';
import { log, progressBar, sleep, step } from './lib/progress';
import { saveResult } from './lib/results';
import { median, percentile, table } from './lib/stats';
import { deleteRedisPrefix } from './outbound/setup';
import {
  benchDatabase,
  dropDatabase,
  ingest,
  setupDatabase,
  stopIngest,
  type Sent,
  type StreamTenant,
} from './streams/setup';

const LISTENER = 'bench/streams/listener.ts';
const STREAMS = envInt('BENCH_STREAMS', 1000);
const TENANTS = Math.min(envInt('BENCH_STREAM_TENANTS', 10), STREAMS);
const RATE = envInt('BENCH_STREAM_RATE', 20);
const SECONDS = envInt('BENCH_STREAM_SECONDS', 30);
const SETTLE_S = envInt('BENCH_STREAM_SETTLE', 30);
const LISTENERS = Math.min(envInt('BENCH_STREAM_LISTENERS', 2), STREAMS);
/** The API's own default (it reads the same variable when it is set). */
const PER_KEY = envInt('EVENT_STREAM_MAX_PER_KEY', 5);
const KEEP_DB = process.env.BENCH_KEEP_DB === '1';
const WARMUP_S = 5;
/** The longest wait for the last receipts after the last message was answered. */
const DRAIN_S = 30;
/** Connections per loopback source address (the API's cap per address is 256). */
const PER_ADDRESS = 200;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUN = randomBytes(3).toString('hex');
const PREFIX = `{sbbst-${RUN}}`;
const MIB = 2 ** 20;

const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
const load = (): string =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

interface Assigned {
  i: number;
  key: string;
  from: string;
  tenant: number;
}

/** What one measured phase received. */
interface Tally {
  phase: number;
  sent: Map<string, Sent>;
  /** The streams counted, by tenant index. */
  streamsOf: Map<number, number[]>;
  /** (stream:tag) → receipt time. */
  got: Map<string, number>;
  duplicates: number;
  /** Receipts of an event of another tenant than the stream's (must be 0). */
  foreign: number;
  /** Receipts of an event of an earlier phase (a stream starts at the settle window before it opened). */
  earlier: number;
}

const tenantOfStream = new Map<number, number>();
let current: Tally | null = null;
const endedStreams: string[] = [];
let openedStreams = 0;

function onLine(line: string): void {
  const [kind, a, b, c] = line.split(' ');
  if (kind === 'o') openedStreams += 1;
  else if (kind === 'x') endedStreams.push(`${a} ${line.slice(3 + (a?.length ?? 0))}`);
  else if (kind === 'e' && current) {
    const stream = Number(a);
    const tag = b ?? '';
    if (Number(tag.charAt(3)) !== current.phase) {
      current.earlier += 1;
      return;
    }
    const sent = current.sent.get(tag);
    if (!sent || sent.tenant !== tenantOfStream.get(stream)) {
      current.foreign += 1;
      return;
    }
    const key = `${stream}:${tag}`;
    if (current.got.has(key)) current.duplicates += 1;
    else current.got.set(key, Number(c));
  }
}

function startListener(name: string, base: string, streams: Assigned[]): Child {
  const child = startTsChild(name, LISTENER_FILE, {
    ...process.env,
    NODE_ENV: 'production',
    LISTENER_BASE: base,
    LISTENER_STREAMS: JSON.stringify(streams.map(({ i, key, from }) => ({ i, key, from }))),
  });
  let pending = '';
  child.proc.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const l of lines) if (l) onLine(l);
  });
  return child;
}
let LISTENER_FILE = LISTENER;

/** Waits (bounded) until `count()` reaches `total`, with a progress bar; returns the count. */
async function waitUntil(
  label: string,
  total: number,
  count: () => number,
  timeoutS: number,
): Promise<number> {
  const bar = progressBar(label.padEnd(28), total, '');
  for (let i = 0; i < timeoutS * 5 && count() < total; i++) {
    bar.update(count());
    await sleep(200);
  }
  bar.update(count());
  bar.stop();
  return count();
}

/** Median of `samples` VmRSS readings of `pid`, one a second. */
async function rss(pid: number, samples = 5): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < samples; i++) {
    if (i > 0) await sleep(1000);
    values.push(vmRssBytes(pid) ?? Number.NaN);
  }
  return median(values);
}

async function backendsCpu(knex: Knex): Promise<Map<number, number>> {
  const r = (await knex.raw(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  )) as { rows: { pid: number }[] };
  return cpuSecondsOf(r.rows.map((x) => x.pid));
}

const cpuDelta = (before: Map<number, number>, after: Map<number, number>): number =>
  [...after].reduce((s, [pid, v]) => s + v - (before.get(pid) ?? 0), 0);

interface PhaseResult {
  phase: string;
  streams: number;
  events: number;
  /** Messages answered otherwise than 202 (or not at all), by answer. */
  ingestFailed: number;
  ingestFailures: Record<string, number>;
  /** Events in the database at the end (a message whose answer was lost may have committed). */
  committed: number;
  /** Receipts expected: every committed event on every stream of its tenant. */
  expected: number;
  received: number;
  missing: number;
  missingExamples: string[];
  duplicates: number;
  foreign: number;
  earlierPhase: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number; min: number };
  fromAckMs: { p50: number; p95: number; p99: number; max: number };
  ingestAckMs: { p50: number; p99: number };
  seconds: number;
  cpuSeconds: { api: number; postgres: number; listeners: number };
  /** Transactions committed in the bench database (pg_stat_database), per event. */
  postgresXactsPerEvent: number;
  load: string;
}

/** Transactions committed in the current database so far (flushed within a second). */
async function xacts(knex: Knex): Promise<number> {
  const r = (await knex.raw(
    'SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()',
  )) as { rows: { xact_commit: string }[] };
  return Number(r.rows[0]?.xact_commit ?? Number.NaN);
}

/** The tags (`from`) of the `call.started` events in the database. */
async function committedTags(knex: Knex): Promise<Set<string>> {
  const rows = (await knex('events')
    .where({ type: 'call.started' })
    .select(knex.raw(`data->>'from' AS tag`))) as { tag: string }[];
  return new Set(rows.map((r) => r.tag));
}

const summary = (values: number[]) => {
  const s = [...values].sort((x, y) => x - y);
  const r = (n: number) => Number(n.toFixed(1));
  return {
    p50: r(percentile(s, 50)),
    p95: r(percentile(s, 95)),
    p99: r(percentile(s, 99)),
    max: r(s[s.length - 1] ?? Number.NaN),
    min: r(s[0] ?? Number.NaN),
  };
};

/** One measured ingestion: `streams` (by tenant) must receive every event of their tenant. */
async function measure(
  label: string,
  phase: number,
  ctx: {
    base: string;
    ingestToken: string;
    tenants: StreamTenant[];
    api: Child;
    listeners: Child[];
    knex: Knex;
  },
  streams: Assigned[],
  tenantOf: (k: number) => number,
): Promise<PhaseResult> {
  const streamsOf = new Map<number, number[]>();
  for (const s of streams) streamsOf.set(s.tenant, [...(streamsOf.get(s.tenant) ?? []), s.i]);
  const tally: Tally = {
    phase,
    sent: new Map(),
    streamsOf,
    got: new Map(),
    duplicates: 0,
    foreign: 0,
    earlier: 0,
  };
  const loadBefore = load();
  const xactsBefore = await xacts(ctx.knex);
  const pgBefore = await backendsCpu(ctx.knex);
  const apiBefore = cpuSnapshot(ctx.api.proc.pid);
  const listenersBefore = ctx.listeners.map((l) => cpuSnapshot(l.proc.pid)?.group ?? 0);
  const started = performance.now();
  current = tally;
  const { failed } = await ingest(`${label}: ingest`, {
    base: ctx.base,
    ingestToken: ctx.ingestToken,
    phase,
    rate: RATE,
    seconds: SECONDS,
    tenants: ctx.tenants,
    tenantOf,
    sent: tally.sent,
  });
  // Every event that committed must reach every stream of its tenant, whatever its answer.
  const receiptsOf = async () => {
    const committed = await committedTags(ctx.knex);
    const counted = [...tally.sent].filter(([tag]) => committed.has(tag));
    let expected = 0;
    for (const [, s] of counted) expected += streamsOf.get(s.tenant)?.length ?? 0;
    return { counted, expected };
  };
  const due = await receiptsOf();
  await waitUntil(`${label}: last receipts`, due.expected, () => tally.got.size, DRAIN_S);
  // Again: a message whose request timed out may have committed meanwhile.
  const { counted, expected } = await receiptsOf();
  current = null;
  const seconds = (performance.now() - started) / 1000;
  const apiAfter = cpuSnapshot(ctx.api.proc.pid);
  const pgAfter = await backendsCpu(ctx.knex);
  const listenersAfter = ctx.listeners.map((l) => cpuSnapshot(l.proc.pid)?.group ?? 0);
  // A backend flushes its statistics at most once a second, and an idle one within 10 s.
  await sleep(11_000);
  const xactsAfter = await xacts(ctx.knex);
  const ingestFailures: Record<string, number> = {};
  for (const s of tally.sent.values()) {
    if (s.status === 202) continue;
    const why = s.status === null ? (s.error ?? 'no answer') : String(s.status);
    ingestFailures[why] = (ingestFailures[why] ?? 0) + 1;
  }

  const latencies: number[] = [];
  const fromAck: number[] = [];
  const missingExamples: string[] = [];
  let missing = 0;
  for (const [tag, s] of counted) {
    for (const stream of streamsOf.get(s.tenant) ?? []) {
      const at = tally.got.get(`${stream}:${tag}`);
      if (at === undefined) {
        missing += 1;
        if (missingExamples.length < 10) {
          missingExamples.push(`event ${tag} (tenant ${s.tenant}) on stream ${stream}`);
        }
        continue;
      }
      latencies.push(at - s.sentAt);
      if (s.ackAt !== null) fromAck.push(at - s.ackAt);
    }
  }
  const acks = [...tally.sent.values()]
    .filter((s) => s.ackAt !== null)
    .map((s) => (s.ackAt as number) - s.sentAt);
  const ackSummary = summary(acks);
  const fromAckSummary = summary(fromAck);
  return {
    phase: label,
    streams: streams.length,
    events: tally.sent.size,
    ingestFailed: failed,
    ingestFailures,
    committed: counted.length,
    expected,
    received: tally.got.size,
    missing,
    missingExamples,
    duplicates: tally.duplicates,
    foreign: tally.foreign,
    earlierPhase: tally.earlier,
    latencyMs: summary(latencies),
    fromAckMs: {
      p50: fromAckSummary.p50,
      p95: fromAckSummary.p95,
      p99: fromAckSummary.p99,
      max: fromAckSummary.max,
    },
    ingestAckMs: { p50: ackSummary.p50, p99: ackSummary.p99 },
    seconds: Number(seconds.toFixed(1)),
    cpuSeconds: {
      api: Number(((apiAfter?.group ?? Number.NaN) - (apiBefore?.group ?? Number.NaN)).toFixed(2)),
      postgres: Number(cpuDelta(pgBefore, pgAfter).toFixed(2)),
      listeners: Number(
        listenersAfter.reduce((s, v, i) => s + v - (listenersBefore[i] ?? 0), 0).toFixed(2),
      ),
    },
    postgresXactsPerEvent: Number(((xactsAfter - xactsBefore) / tally.sent.size).toFixed(1)),
    load: `${loadBefore} → ${load()}`,
  };
}

let cleanup: () => Promise<void> = async () => undefined;

async function main(): Promise<number> {
  installChildCleanup(() => {
    stopIngest();
    return stopAllChildren().then(() => cleanup());
  });
  const startedAt = new Date();
  const machine = machineInfo();
  log(
    `streams benchmark: nproc ${machine.nproc}, node ${machine.node}, load ${machine.loadavg.join(' ')}; ${STREAMS} streams over ${TENANTS} tenants, ${RATE} events/s for ${SECONDS} s`,
  );
  if (new URL(REDIS_URL).hostname !== '127.0.0.1') {
    throw new Error('the benchmark only talks to Redis on 127.0.0.1');
  }
  const perTenant = Math.ceil(STREAMS / TENANTS);
  const keysEach = Math.ceil(perTenant / PER_KEY);
  const redis = createRedis(REDIS_URL, 'worker');
  let knex: Knex | null = null;
  let dbCreated = false;
  let cleaning: Promise<void> | null = null;
  const cleanUp = async (): Promise<void> => {
    const deleted = await deleteRedisPrefix(redis, PREFIX).catch(() => -1);
    log(`  removed ${deleted} Redis keys of this run (${PREFIX})`);
    await closeRedis(redis).catch(() => undefined);
    await knex?.destroy().catch(() => undefined);
    closeHttpAgent();
    if (dbCreated && !KEEP_DB) {
      await dropDatabase().catch((err: unknown) =>
        log(`  could not drop the bench database: ${String(err)}`),
      );
      log('  dropped the bench database');
    } else if (dbCreated) log('  kept the bench database (BENCH_KEEP_DB=1)');
  };
  cleanup = () => (cleaning ??= cleanUp());

  try {
    await redis.ping();
    const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
    dbCreated = true;
    const tenants = await step(
      `recreating the bench database: ${TENANTS} tenants, ${keysEach} read keys each`,
      () => setupDatabase(TENANTS, keysEach),
    );
    const { benchUrl, dbName } = benchDatabase();
    knex = createKnex(benchUrl, { poolMax: 2 });
    const pgVersion = (
      (await knex.raw('SHOW server_version')) as { rows: { server_version: string }[] }
    ).rows[0]?.server_version;

    const compiled = await compileForBench([LISTENER]);
    LISTENER_FILE = compiled[LISTENER] ?? LISTENER;
    const port = await freePort();
    const ingestToken = randomBytes(24).toString('hex');
    const api = startTsChild('api', serviceEntry('apps/api/dist/server.js'), {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: benchUrl,
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      PORT: String(port),
      API_METRICS_PORT: '0',
      // The shipped default (info): its lines are read and dropped as a log shipper would.
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      INGEST_TOKEN: ingestToken,
      CURSOR_SECRET: randomBytes(24).toString('hex'),
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    const base = `http://127.0.0.1:${port}`;
    await step(`starting the API on port ${port}`, () => waitForHttp(api, `${base}/healthz`));
    const apiPid = largestOfGroup(api.proc.pid as number) ?? (api.proc.pid as number);

    // Stream i: tenant i mod T, its tenant's (i div T) div PER_KEY-th key, from the address
    // of its group of PER_ADDRESS. The baseline stream is number STREAMS, from 127.0.0.9.
    const assigned: Assigned[] = Array.from({ length: STREAMS }, (_, i) => {
      const tenant = i % TENANTS;
      const keys = (tenants[tenant] as StreamTenant).keys;
      return {
        i,
        tenant,
        key: keys[Math.floor(Math.floor(i / TENANTS) / PER_KEY)] as string,
        from: `127.0.0.${10 + Math.floor(i / PER_ADDRESS)}`,
      };
    });
    if (STREAMS / PER_ADDRESS > 240) throw new Error('BENCH_STREAMS is at most 48,000');
    for (const s of assigned) tenantOfStream.set(s.i, s.tenant);
    const baselineStream: Assigned = {
      i: STREAMS,
      tenant: 0,
      key: (tenants[0] as StreamTenant).keys[0] as string,
      from: '127.0.0.9',
    };
    tenantOfStream.set(STREAMS, 0);

    // Baseline: one stream, every event of its tenant.
    const one = startListener('listener-baseline', base, [baselineStream]);
    if ((await waitUntil('baseline: opening 1 stream', 1, () => openedStreams, 60)) < 1) {
      throw new Error(`the baseline stream did not open: ${endedStreams.join('; ')}`);
    }
    const ctxBase = { base, ingestToken, tenants, api, knex };
    await ingest('warm-up (not measured)', {
      ...ctxBase,
      phase: 0,
      rate: RATE,
      seconds: WARMUP_S,
      tenantOf: () => 0,
      sent: new Map(),
    });
    await sleep(2000);
    log(`» baseline, 1 stream; load ${load()}`);
    const baseline = await measure(
      'baseline',
      1,
      { ...ctxBase, listeners: [one] },
      [baselineStream],
      () => 0,
    );
    await one.stop();
    openedStreams = 0;
    endedStreams.length = 0; // the baseline stream, closed by its load process

    // Memory with no stream open, then with all of them open.
    await sleep(3000);
    const rssIdle = await rss(apiPid);
    log(`  API VmRSS with no stream open: ${fmt(rssIdle / MIB, 1)} MiB; load ${load()}`);
    const listeners = Array.from({ length: LISTENERS }, (_, l) =>
      startListener(
        `listener-${l + 1}`,
        base,
        assigned.filter((s) => s.i % LISTENERS === l),
      ),
    );
    const opened = await waitUntil(
      `opening ${fmt(STREAMS)} streams`,
      STREAMS,
      () => openedStreams,
      300,
    );
    if (opened < STREAMS) {
      throw new Error(
        `${opened} of ${STREAMS} streams opened; first failures: ${endedStreams.slice(0, 5).join('; ')}`,
      );
    }
    const idleApi0 = cpuSnapshot(api.proc.pid);
    const idlePg0 = await backendsCpu(knex);
    const idleXacts0 = await xacts(knex);
    await step(`${SETTLE_S} s with ${fmt(STREAMS)} streams open (heartbeats, renewals)`, () =>
      sleep(SETTLE_S * 1000),
    );
    const idleApi1 = cpuSnapshot(api.proc.pid);
    const idlePg1 = await backendsCpu(knex);
    const idleXacts1 = await xacts(knex);
    const rssOpen = await rss(apiPid);
    const perStream = (rssOpen - rssIdle) / STREAMS;
    log(
      `  API VmRSS with ${fmt(STREAMS)} streams open: ${fmt(rssOpen / MIB, 1)} MiB (${fmt(perStream / 1024, 1)} KiB a stream); load ${load()}`,
    );
    if (endedStreams.length > 0) {
      throw new Error(`streams ended while idle: ${endedStreams.slice(0, 5).join('; ')}`);
    }

    log(`» ${fmt(STREAMS)} streams; load ${load()}`);
    const loaded = await measure(
      `${fmt(STREAMS)} streams`,
      2,
      { ...ctxBase, listeners },
      assigned,
      (k) => k % TENANTS,
    );
    const rssAfter = await rss(apiPid, 3);
    const ended = [...endedStreams];

    // CPU while the streams were open and nothing was ingested (the settle above).
    const idle = {
      apiCpuPerSecond: Number(
        (((idleApi1?.group ?? 0) - (idleApi0?.group ?? 0)) / SETTLE_S).toFixed(3),
      ),
      postgresCpuPerSecond: Number((cpuDelta(idlePg0, idlePg1) / SETTLE_S).toFixed(3)),
      postgresXactsPerSecond: Number(((idleXacts1 - idleXacts0) / SETTLE_S).toFixed(1)),
    };
    const phases = [baseline, loaded];
    const failures = phases.reduce(
      (n, p) => n + p.missing + p.duplicates + p.foreign + p.ingestFailed,
      ended.length,
    );
    const report = [
      '',
      'Event streams benchmark (issue 46)',
      `machine: ${machine.nproc} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}, PostgreSQL ${pgVersion}, Redis ${redisVersion}; load before: ${machine.loadavg.join(' ')}, at the end: ${load()}`,
      `API: one process, compiled, at its defaults (EVENT_STREAM_*: settle 1000 ms, heartbeat 15 s, poll 5 s, ${PER_KEY} streams per key; LOG_LEVEL info, stdout read and dropped); no worker`,
      `streams: ${fmt(STREAMS)} over ${TENANTS} tenants (${perTenant} each, ${keysEach} read keys each), from ${LISTENERS} load processes, ${PER_ADDRESS} per loopback source address`,
      `ingest: call.started on POST /internal/v1/telephony/events, ${RATE}/s for ${SECONDS} s (open loop); latency = read on the stream − request sent ("from 202": − its answer, the commit acknowledged)`,
      table([
        [
          'phase',
          'events',
          'receipts / expected',
          'p50 ms',
          'p95 ms',
          'p99 ms',
          'max ms',
          'p50 / p99 from 202',
          'ingest 202 p50 / p99',
          'CPU s API',
          'CPU s pg',
          'pg xacts / event',
          'load',
        ],
        ...phases.map((p) => [
          p.phase,
          fmt(p.events),
          `${fmt(p.received)} / ${fmt(p.expected)}`,
          fmt(p.latencyMs.p50, 1),
          fmt(p.latencyMs.p95, 1),
          fmt(p.latencyMs.p99, 1),
          fmt(p.latencyMs.max, 1),
          `${fmt(p.fromAckMs.p50, 1)} / ${fmt(p.fromAckMs.p99, 1)}`,
          `${fmt(p.ingestAckMs.p50, 1)} / ${fmt(p.ingestAckMs.p99, 1)}`,
          fmt(p.cpuSeconds.api, 2),
          fmt(p.cpuSeconds.postgres, 2),
          fmt(p.postgresXactsPerEvent, 1),
          p.load,
        ]),
      ]),
      '',
      `memory (API VmRSS, median of 5 readings): ${fmt(rssIdle / MIB, 1)} MiB with no stream open, ${fmt(rssOpen / MIB, 1)} MiB with ${fmt(STREAMS)} open after ${SETTLE_S} s: ${fmt(perStream / 1024, 1)} KiB a stream; ${fmt(rssAfter / MIB, 1)} MiB after the run`,
      `idle, ${fmt(STREAMS)} streams open: API ${fmt(idle.apiCpuPerSecond, 3)} CPU s/s, Postgres (bench database) ${fmt(idle.postgresCpuPerSecond, 3)} CPU s/s and ${fmt(idle.postgresXactsPerSecond, 1)} transactions/s`,
      `load processes' CPU during the run: ${fmt(loaded.cpuSeconds.listeners, 2)} s`,
      ...phases.map(
        (p) =>
          `${p.phase}: ${fmt(p.committed)} of ${fmt(p.events)} events committed; receipts missing ${fmt(p.missing)}, repeated ${fmt(p.duplicates)}, of another tenant ${fmt(p.foreign)}; ingest answers other than 202: ${fmt(p.ingestFailed)}${
            p.ingestFailed
              ? ` (${Object.entries(p.ingestFailures)
                  .map(([k, v]) => `${k}: ${v}`)
                  .join(', ')})`
              : ''
          }${p.missingExamples.length ? `; e.g. ${p.missingExamples.join(', ')}` : ''}`,
      ),
      `streams ended by the server during the run: ${ended.length}${ended.length ? ` (${ended.slice(0, 5).join('; ')})` : ''}`,
    ];
    process.stdout.write(`${report.join('\n')}\n`);
    saveResult(
      'streams',
      startedAt,
      {
        benchmark: 'streams',
        command: 'npm run bench:streams',
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        machine,
        versions: { postgres: pgVersion, redis: redisVersion },
        database: KEEP_DB ? `${dbName} (kept)` : `${dbName} (dropped at the end)`,
        settings: {
          streams: STREAMS,
          tenants: TENANTS,
          keysPerTenant: keysEach,
          streamsPerKey: PER_KEY,
          rate: RATE,
          seconds: SECONDS,
          settleSeconds: SETTLE_S,
          listeners: LISTENERS,
        },
        memory: {
          rssNoStreamsBytes: rssIdle,
          rssOpenBytes: rssOpen,
          rssAfterRunBytes: rssAfter,
          perStreamBytes: Math.round(perStream),
        },
        idle,
        phases,
        ended,
      },
      log,
    );
    if (failures > 0) {
      log(`\n${failures} receipts missing, repeated or misrouted, or streams ended: see above`);
      return 1;
    }
    return 0;
  } finally {
    await stopAllChildren();
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(
      `\nstreams benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    await stopAllChildren();
    await cleanup().catch(() => undefined);
    process.exit(1);
  },
);
