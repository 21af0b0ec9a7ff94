/**
 * Fairness between tenants (issue 22): `npm run bench:fairness`.
 *
 * One worker (the real runner, in this process, WORKER_CONCURRENCY 20 = the default) and one
 * HTTPS receiver on 127.0.0.1 (also in this process: its receipt times share the clock of
 * the emitter). Tenant A emits BENCH_FAIR_RATE events a second (one `emit()` transaction
 * each) to a healthy subscription (answers 204 at once); ingest → receipt is the time from
 * A's COMMIT to the receiver seeing the request. Each phase runs A for BENCH_FAIR_SECONDS:
 *  (0) baseline: A alone;
 *  (a) burst: tenant D's BENCH_FAIR_BURST events (emitMany, 5,000 a transaction, as an
 *      import does), each to D's own healthy subscription, committed before A starts; D's
 *      backlog is reported at the end of the phase (it is still draining: "throughout");
 *  (b) hung: tenant C's BENCH_FAIR_HUNG_SUBS subscriptions never answer (WEBHOOK_TIMEOUT_MS,
 *      10 s), and C's BENCH_FAIR_HUNG_EVENTS events make SUBS × EVENTS deliveries;
 *  (c) a flood of requests without a valid credential against the real API (a child
 *      process), from a flooder process: ./fairness/flood.ts;
 *  (f) issue 47's flood: the API as it ships; tenant A reads a list from 127.0.0.1 at a fixed
 *      rate (open loop) while a flooder process sends bogus keys from 127.0.0.2 as fast as
 *      it can, and the same flood against a bare server answering 429 (the machine's share):
 *      ./fairness/loopback.ts. Not among the default phases: BENCH_FAIR_PHASES=f.
 * Goals (docs/benchmarks/fairness.md): (a) A's p99 ≤ 2 s, (b) A's p99 ≤ 1 s, (c) and (f) A's p95
 * during the flood within 2× its p95 alone.
 *
 * Knobs (env): BENCH_FAIR_BURST (1000000), BENCH_FAIR_RATE (10), BENCH_FAIR_SECONDS (60),
 * BENCH_FAIR_HUNG_SUBS (60), BENCH_FAIR_HUNG_EVENTS (200), BENCH_FAIR_FLOOD_SAMPLES (300),
 * BENCH_FAIR_FLOOD_CONNECTIONS (50), BENCH_FAIR_FLOOD_ROUNDS (3), BENCH_FAIR_FLOOD_RATE (0 =
 * unpaced; requests a second in all), BENCH_FAIR_PHASES (0,a,b,c; f is issue 47's flood).
 * (f): BENCH_FAIR_LOOP_A_RATE (A's requests a second, 50), BENCH_FAIR_LOOP_SECONDS (each window,
 * 10), BENCH_FAIR_LOOP_ROUNDS (3), BENCH_FAIR_LOOP_KEEPALIVE and BENCH_FAIR_LOOP_CLOSING (the
 * flooder's connections of each kind, 64 and 64), BENCH_FAIR_LOOP_FLOODERS (processes, 1),
 * BENCH_FAIR_LOOP_A_SOCKETS (A's connections at most, 32), BENCH_CPU_PROF=1 (the API profiled
 * during its first flood window, summarised), BENCH_FROM_SOURCES=1 (tsx instead of the build).
 * Database switchboard_bench_fairness (dropped at the end); Redis keys under `{sbfair-<id>}`.
 * Result: stdout table, bench/.results/fairness-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadConfig } from '@switchboard/config';
import { createKnex, type Knex } from '@switchboard/db';
import { emit, emitMany } from '@switchboard/events';
import { createLogger } from '@switchboard/logger';
import { createRedis } from '@switchboard/queues';
import { createWorkerDeps } from '../apps/worker/src/deps';
import { startRunner } from '../apps/worker/src/runner';
import { generateCertificate, startReceiver } from '../packages/webhooks/src/testing/tls-receiver';
import {
  createTenant,
  deleteRedisKeys,
  dropDatabase,
  recreateDatabase,
  type BenchTenant,
} from './delivery/setup';
import { runFlood, type FloodResult } from './fairness/flood';
import { runLoopbackFlood, type LoopbackResult } from './fairness/loopback';
import { installChildCleanup, stopAllChildren } from './lib/children';
import { envInt } from './lib/env';
import { machineInfo } from './lib/machine';
import { log, progressBar, sleep, step } from './lib/progress';
import { saveResult } from './lib/results';
import { summarize, table, type LatencySummary } from './lib/stats';

// The bench database's name (read by ./delivery/setup when it is called).
process.env.BENCH_DELIVERY_DATABASE_NAME ??= 'switchboard_bench_fairness';

const BURST = envInt('BENCH_FAIR_BURST', 1_000_000);
const RATE = envInt('BENCH_FAIR_RATE', 10);
const SECONDS = envInt('BENCH_FAIR_SECONDS', 60);
const HUNG_SUBS = envInt('BENCH_FAIR_HUNG_SUBS', 60);
const HUNG_EVENTS = envInt('BENCH_FAIR_HUNG_EVENTS', 200);
const FLOOD_SAMPLES = envInt('BENCH_FAIR_FLOOD_SAMPLES', 300);
const FLOOD_CONNECTIONS = envInt('BENCH_FAIR_FLOOD_CONNECTIONS', 50);
const FLOOD_ROUNDS = envInt('BENCH_FAIR_FLOOD_ROUNDS', 3);
/** 0: unpaced (each client sends as fast as it is answered). */
const FLOOD_RATE = Number(process.env.BENCH_FAIR_FLOOD_RATE ?? 0);
const PHASES = new Set((process.env.BENCH_FAIR_PHASES ?? '0,a,b,c').split(','));
const LOOP = {
  aRate: envInt('BENCH_FAIR_LOOP_A_RATE', 50),
  aSockets: envInt('BENCH_FAIR_LOOP_A_SOCKETS', 32),
  seconds: envInt('BENCH_FAIR_LOOP_SECONDS', 10),
  rounds: envInt('BENCH_FAIR_LOOP_ROUNDS', 3),
  keepAlive: envInt('BENCH_FAIR_LOOP_KEEPALIVE', 64),
  closing: envInt('BENCH_FAIR_LOOP_CLOSING', 64),
  flooders: envInt('BENCH_FAIR_LOOP_FLOODERS', 1),
  profile: process.env.BENCH_CPU_PROF === '1',
};
/** The phases that need the worker and the webhook receiver in this process. */
const WORKER_PHASES = ['0', 'a', 'b'].filter((p) => PHASES.has(p));
const EMIT_BATCH = 5_000;

const callStarted = () => ({
  call_id: `call_${randomBytes(8).toString('hex')}`,
  direction: 'inbound' as const,
  from: '+14155550100',
  to: '+14155550199',
  started_at: new Date().toISOString(),
});

interface PhaseResult {
  phase: string;
  a: LatencySummary;
  aLost: number;
  note: string;
}

async function main(): Promise<void> {
  installChildCleanup();
  const startedAt = new Date();
  const machine = machineInfo();
  log(`load average at start: ${machine.loadavg.join(' ')}`);
  const { benchUrl } = await step('database', () => recreateDatabase());
  const prefix = `{sbfair-${randomBytes(4).toString('hex')}}`;
  const key = randomBytes(32);
  const config = loadConfig({
    DATABASE_URL: benchUrl,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    INGEST_TOKEN: 'bench-ingest-token-0123456789',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789',
    SECRET_ENCRYPTION_KEY: key.toString('base64'),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'silent',
  });

  const receivedAt = new Map<string, number>();
  const hung: ServerResponse[] = [];
  let dReceived = 0;
  const cert = generateCertificate('IP:127.0.0.1');
  const receiver = await startReceiver(cert, {
    '/a': (req: IncomingMessage, res) => {
      receivedAt.set(String(req.headers['x-service-event-id']), performance.now());
      res.writeHead(204).end();
    },
    '/d': (_req, res) => {
      dReceived++;
      res.writeHead(204).end();
    },
    '/hung': (_req, res) => void hung.push(res),
  });
  // The receiver keeps every request it saw; a long run does not need them.
  const trim = setInterval(() => receiver.requests.splice(0), 1000);
  const base = `https://127.0.0.1:${receiver.port}`;

  const knex: Knex = createKnex(benchUrl, { poolMax: 8 });
  const deps = createWorkerDeps(config, {
    logger: createLogger('worker', 'silent'),
    webhookCa: cert.cert,
  });
  // Only the phases of webhook delivery need the worker: (c) and (f) measure the API alone.
  const runner = WORKER_PHASES.length ? await startRunner(deps, { metricsPort: null }) : undefined;
  const results: PhaseResult[] = [];
  let flood: FloodResult | undefined;
  let loopback: LoopbackResult | undefined;
  const backlog = async (tenantId: string) => {
    const { rows } = (await knex.raw(
      `SELECT (SELECT count(*)::int FROM event_outbox WHERE tenant_id = ?) AS events,
              (SELECT count(*)::int FROM webhook_deliveries
                WHERE tenant_id = ? AND status IN ('pending', 'delivering')) AS deliveries`,
      [tenantId, tenantId],
    )) as { rows: Array<{ events: number; deliveries: number }> };
    return rows[0] as { events: number; deliveries: number };
  };

  /** A emits RATE events a second for SECONDS; its latencies, once each has arrived. */
  async function runA(a: BenchTenant, phase: string, note: () => Promise<string>) {
    const committedAt = new Map<string, number>();
    const interval = 1000 / RATE;
    const t0 = performance.now();
    // One line every 10 s: a long phase shows it is alive and how A and D are doing.
    const ticker = setInterval(() => {
      const arrived = [...committedAt.keys()].filter((id) => receivedAt.has(id)).length;
      log(
        `  ${phase}: ${Math.round((performance.now() - t0) / 1000)} s, A ${committedAt.size} sent / ${arrived} received, D received ${dReceived}, load ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
    }, 10_000);
    for (let i = 0; i < RATE * SECONDS; i++) {
      const due = t0 + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const id = await knex.transaction((trx) =>
        emit(trx, {
          tenantId: a.tenantId,
          receptionistId: a.receptionistId,
          type: 'call.started',
          data: callStarted(),
        }),
      );
      committedAt.set(id, performance.now());
    }
    clearInterval(ticker);
    const n = await note();
    const deadline = Date.now() + 60_000;
    while ([...committedAt.keys()].some((id) => !receivedAt.has(id)) && Date.now() < deadline) {
      await sleep(100);
    }
    const latencies = [...committedAt]
      .filter(([id]) => receivedAt.has(id))
      .map(([id, at]) => (receivedAt.get(id) as number) - at);
    const result = {
      phase,
      a: summarize(latencies),
      aLost: committedAt.size - latencies.length,
      note: n,
    };
    results.push(result);
    log(`${phase}: A p50 ${result.a.p50} ms, p99 ${result.a.p99} ms, max ${result.a.max} ms; ${n}`);
  }

  try {
    if (PHASES.has('0')) {
      const a = await createTenant(knex, key, 'A0', 1, () => `${base}/a`);
      await step('(0) baseline: A alone', () => runA(a, '0 baseline', async () => 'A alone'));
    }
    if (PHASES.has('a')) {
      const a = await createTenant(knex, key, 'Aa', 1, () => `${base}/a`);
      const d = await createTenant(knex, key, 'D', 1, () => `${base}/d`);
      await step(`(a) D commits ${BURST} events`, async () => {
        const bar = progressBar('(a) D commits'.padEnd(20), BURST, 'events');
        for (let done = 0; done < BURST; done += EMIT_BATCH) {
          const n = Math.min(EMIT_BATCH, BURST - done);
          bar.update(done, { note: ` | D received ${dReceived}` });
          await knex.transaction((trx) =>
            emitMany(
              trx,
              Array.from({ length: n }, () => ({
                tenantId: d.tenantId,
                receptionistId: d.receptionistId,
                type: 'call.started' as const,
                data: callStarted(),
              })),
            ),
          );
        }
        bar.update(BURST, { note: ` | D received ${dReceived}` });
        bar.stop();
      });
      await step('(a) A during D’s burst', () =>
        runA(a, 'a burst', async () => {
          const b = await backlog(d.tenantId);
          return `D at the end: ${dReceived} received, ${b.events} events not fanned out, ${b.deliveries} deliveries open`;
        }),
      );
      // D's backlog is not drained: the phase is over, its rows go with the database.
      await knex('event_outbox').where({ tenant_id: d.tenantId }).delete();
    }
    if (PHASES.has('b')) {
      const a = await createTenant(knex, key, 'Ab', 1, () => `${base}/a`);
      const c = await createTenant(knex, key, 'C', HUNG_SUBS, () => `${base}/hung`);
      await knex.transaction((trx) =>
        emitMany(
          trx,
          Array.from({ length: HUNG_EVENTS }, () => ({
            tenantId: c.tenantId,
            receptionistId: c.receptionistId,
            type: 'call.started' as const,
            data: callStarted(),
          })),
        ),
      );
      await sleep(2000); // C's fan-out under way, its lanes full, its jobs queued
      await step(`(b) A beside C's ${HUNG_SUBS} hung subscriptions`, () =>
        runA(a, 'b hung', async () => {
          const counts = await deps.queues.deliveries.getJobCounts(
            'wait',
            'prioritized',
            'delayed',
          );
          return `C: ${hung.length} requests hung so far; deliveries queue ${JSON.stringify(counts)}`;
        }),
      );
    }
    if (PHASES.has('c')) {
      flood = await step(`(c) A's GET /usage beside a bogus-key flood`, () =>
        runFlood(
          knex,
          { benchUrl, prefix, encryptionKey: key.toString('base64') },
          {
            samples: FLOOD_SAMPLES,
            rounds: FLOOD_ROUNDS,
            connections: FLOOD_CONNECTIONS,
            rate: FLOOD_RATE,
          },
        ),
      );
      log(
        `c flood: A's p50/p95 alone ${flood.baseline.p50}/${flood.p95.alone} ms, during the flood ${flood.duringFlood.p50}/${flood.p95.duringFlood} ms (p95 ratio ${flood.ratioP95}); API CPU ${flood.apiCpuMsPerFloodRequest} ms and flooder CPU ${flood.flooderCpuMsPerRequest} ms per flood request; flood ${JSON.stringify(flood.flood)}`,
      );
    }
    if (PHASES.has('f')) {
      const l = await step(
        `(f) A's GET /calls from 127.0.0.1 beside a bogus-key flood from 127.0.0.2, and the same flood against a bare server`,
        () =>
          runLoopbackFlood(knex, { benchUrl, prefix, encryptionKey: key.toString('base64') }, LOOP),
      );
      loopback = l;
      log(`\n${loopbackTable(l)}`);
    }
  } finally {
    await stopAllChildren();
    clearInterval(trim);
    for (const res of hung) res.destroy();
    await runner?.close(5000).catch(() => undefined);
    await deps.close();
    await receiver.close();
    await knex.destroy();
    const redis = createRedis(config.redis, 'worker');
    await deleteRedisKeys(redis, `${prefix}*`);
    redis.disconnect();
    if (!process.env.BENCH_KEEP_DB) await dropDatabase();
  }

  const finishedLoad = machineInfo().loadavg;
  log(
    `\n${table([
      ['phase', 'A events', 'lost', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'note'],
      ...results.map((r) => [
        r.phase,
        String(r.a.samples),
        String(r.aLost),
        String(r.a.p50),
        String(r.a.p90),
        String(r.a.p99),
        String(r.a.max),
        r.note,
      ]),
    ])}`,
  );
  log(`load average at end: ${finishedLoad.join(' ')}`);
  saveResult(
    'fairness',
    startedAt,
    {
      machine,
      finishedLoad,
      knobs: {
        BURST,
        RATE,
        SECONDS,
        HUNG_SUBS,
        HUNG_EVENTS,
        FLOOD_SAMPLES,
        FLOOD_CONNECTIONS,
        FLOOD_ROUNDS,
        FLOOD_RATE,
      },
      results,
      flood,
      loopback,
    },
    log,
  );
}

/** Part (f)'s figures: one row for the API, one for the control. */
function loopbackTable(l: LoopbackResult): string {
  const pct = (n: number) => `${Math.round(n * 100)} %`;
  return table([
    [
      'flood against',
      'A p50/p95/p99 alone ms',
      'A p50/p95/p99 flooded ms',
      'p95 ratio',
      'by round (median)',
      'flood req/s',
      '429',
      'closed after answer',
      'reset',
      'cores: target / flooder',
      'target CPU ms per flood request',
    ],
    ...[l.api, l.control].map((t) => [
      t.target === 'api' ? 'the API (as shipped)' : 'bare 429 server',
      `${t.quiet.p50}/${t.quiet.p95}/${t.quiet.p99}`,
      `${t.flooded.p50}/${t.flooded.p95}/${t.flooded.p99}`,
      String(t.ratioP95),
      `${t.ratioP95ByRound.join(' ')} (${t.ratioP95Median})`,
      String(t.flood.perSecond),
      pct(t.flood.share429),
      pct(t.flood.shareClosedAfterAnswer),
      String(t.flood.reset),
      `${t.targetCoresFlooded} / ${t.flood.flooderCores}`,
      String(t.cpuMsPerFloodRequest),
    ]),
  ]);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
