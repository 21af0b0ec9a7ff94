/**
 * Call history at scale (issue 3): `npm run bench:calls`.
 *
 * 1. Seeds `switchboard_bench` with 2,000,000 calls (10 tenants × 20 receptionists, one
 *    tenant with 1,100,000) by COPY, unless it already holds exactly that seed.
 * 2. Starts the real API as a child process.
 * 3. Page latency over HTTP at cursor depths 0, 10k, 100k and 1M of the big tenant, plus the
 *    same list query timed in-process and its EXPLAIN (ANALYZE, BUFFERS) at depth 1M.
 * 4. Throughput with autocannon: GET /api/v1/calls?limit=20 against a bare Express 5 route
 *    doing one SELECT by primary key (bench/bare-server.ts).
 * 5. Prints a table and writes bench/.results/calls-<timestamp>.json.
 *
 * Knobs (env): BENCH_RESEED=1 forces a fresh seed; BENCH_WALK_1M=1 walks to depth 1M over
 * HTTP instead of building that one cursor from SQL; BENCH_CALLS_TOTAL shrinks the seed for a
 * quick smoke run (depths beyond the big tenant are skipped); BENCH_SAMPLES (200),
 * BENCH_DURATION (10 s per autocannon run), BENCH_CONNECTIONS (10), BENCH_ROUNDS (3).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Client } from 'pg';
import {
  ApiKeysStore,
  CallLifecycle,
  CallsStore,
  createKnex,
  listCallsStatement,
  TenantsStore,
  type KeysetPosition,
} from '@switchboard/db';
import { CursorCodec } from '../apps/api/src/pagination/cursor';
import { runCannon, stopCannon } from './lib/cannon';
import {
  type Child,
  installChildCleanup,
  startTsChild,
  stopAllChildren,
  waitForHttp,
} from './lib/children';
import { closeHttpAgent, freePort, httpGet } from './lib/http';
import { envInt, LIFTED_KEY_LIMIT, UNLIMITED_API_RATE } from './lib/env';
import { machineInfo } from './lib/machine';
import { cpuSnapshot } from './lib/proc';
import { log, progressBar, seconds, step } from './lib/progress';
import { saveResult } from './lib/results';
import { median, summarize, table, timeSequential, type LatencySummary } from './lib/stats';
import { databaseUrls, ensureSeed, type SeedResult, type SeedSpec } from './calls/seed';
import { compileForBench, serviceEntry } from './lib/compiled';

/** The bare reference (compiled with the services: ./lib/compiled.ts). */
const BARE_SERVER = 'bench/bare-server.ts';

const TOTAL = envInt('BENCH_CALLS_TOTAL', 2_000_000);
const SPEC: SeedSpec = {
  version: 1,
  total: TOTAL,
  tenants: 10,
  receptionistsPerTenant: 20,
  bigTenantCalls: Math.round(TOTAL * 0.55),
  prngSeed: 20261122,
};
const PAGE = 20;
const WALK_PAGE = 100;
const ALL_DEPTHS = [0, 10_000, 100_000, 1_000_000];
const DEPTHS = ALL_DEPTHS.filter((d) => d + PAGE <= SPEC.bigTenantCalls);
const SAMPLES = envInt('BENCH_SAMPLES', 200);
const WARMUP_REQUESTS = 20;
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 10);
const DURATION_S = envInt('BENCH_DURATION', 10);
const WARMUP_S = 2;
const ROUNDS = envInt('BENCH_ROUNDS', 3);
const WALK_1M = process.env.BENCH_WALK_1M === '1';
const TARGET_DEPTH_RATIO = 1.2;
const TARGET_THROUGHPUT_RATIO = 0.8;

const fmt = (n: number, digits = 2): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
const int = (n: number): string => n.toLocaleString('en-US');

interface ListItem {
  id: string;
  started_at: string;
}
interface ListBody {
  calls: ListItem[];
  next_cursor: string | null;
  scope: string;
}

function parseList(body: string): ListBody {
  const v: unknown = JSON.parse(body);
  if (
    typeof v === 'object' &&
    v !== null &&
    'calls' in v &&
    Array.isArray(v.calls) &&
    'next_cursor' in v &&
    (v.next_cursor === null || typeof v.next_cursor === 'string')
  ) {
    return v as ListBody;
  }
  throw new Error(`unexpected list response: ${body.slice(0, 200)}`);
}

/** (started_at, id) strictly decreasing, as `ORDER BY started_at DESC, id DESC` promises. */
const before = (a: ListItem, b: ListItem): boolean =>
  a.started_at > b.started_at || (a.started_at === b.started_at && a.id > b.id);

interface DepthResult {
  depth: number;
  cursorFrom: string;
  http: LatencySummary;
  firstId: string | null;
}

async function main(): Promise<number> {
  installChildCleanup(stopCannon);
  const startedAt = new Date();
  const machine = machineInfo();
  const { benchUrl, dbName } = databaseUrls();
  log(
    `calls benchmark: ${int(SPEC.total)} calls in ${dbName}; nproc ${machine.nproc}, node ${machine.node}`,
  );
  if ((machine.loadavg[0] ?? 0) > 0.5) {
    log(
      `  note: load average is ${machine.loadavg.join(' ')}: other work on this machine makes the figures noisy`,
    );
  }
  if (DEPTHS.length < ALL_DEPTHS.length) {
    log(
      `  note: the big tenant has ${int(SPEC.bigTenantCalls)} calls: depths ${ALL_DEPTHS.filter(
        (d) => !DEPTHS.includes(d),
      )
        .map(int)
        .join(', ')} skipped`,
    );
  }

  // 1. Seed.
  const seed: SeedResult = await step('seed', () =>
    ensureSeed(SPEC, process.env.BENCH_RESEED === '1'),
  );
  const tenantId = seed.bigTenantId;
  const auth = { authorization: `Bearer ${seed.apiKey}` };

  const pg = new Client({ connectionString: benchUrl });
  await pg.connect();
  const knex = createKnex(benchUrl, { poolMax: 2 });
  try {
    // The measured key's limit is lifted: the run measures the limiter, never its 429s.
    await new TenantsStore(knex).setRateLimit(tenantId, LIFTED_KEY_LIMIT);
    const pgInfo = await pg.query<{ version: string; shared_buffers: string; work_mem: string }>(
      `SELECT version() AS version, current_setting('shared_buffers') AS shared_buffers,
              current_setting('work_mem') AS work_mem`,
    );
    const postgres = pgInfo.rows[0] as {
      version: string;
      shared_buffers: string;
      work_mem: string;
    };

    // 2. The real API.
    const cursorSecret = randomBytes(24).toString('hex');
    const codec = new CursorCodec(cursorSecret);
    const apiPort = await freePort();
    const compiled = await compileForBench([BARE_SERVER]);
    const api = startTsChild('api', serviceEntry('apps/api/dist/server.js'), {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: benchUrl,
      PORT: String(apiPort),
      LOG_LEVEL: 'warn',
      INGEST_TOKEN: randomBytes(24).toString('hex'),
      CURSOR_SECRET: cursorSecret,
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ...UNLIMITED_API_RATE,
    });
    const apiBase = `http://127.0.0.1:${apiPort}`;
    await step(`starting the API on port ${apiPort}`, () => waitForHttp(api, `${apiBase}/healthz`));
    const list = async (limit: number, cursor: string | null): Promise<ListBody> => {
      const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const res = await httpGet(`${apiBase}/api/v1/calls?limit=${limit}${q}`, auth);
      if (res.status !== 200)
        throw new Error(`GET /api/v1/calls → ${res.status}: ${res.body.slice(0, 300)}`);
      return parseList(res.body);
    };

    // 3a. Cursors at each depth: walked over HTTP, and (for 1M, unless BENCH_WALK_1M) built
    // from the row at that depth exactly as the server would have encoded it.
    const sqlCursor = async (depth: number): Promise<string> => {
      const r = await pg.query<{ started_at: Date; id: string }>(
        `SELECT started_at, id FROM calls WHERE tenant_id = $1
          ORDER BY started_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [tenantId, depth - 1],
      );
      const row = r.rows[0];
      if (!row) throw new Error(`the big tenant has no row at depth ${depth}`);
      return codec.encode('calls', tenantId, { t: row.started_at.getTime(), id: row.id });
    };
    const cursors = new Map<number, { cursor: string | null; from: string }>([
      [0, { cursor: null, from: 'first page' }],
    ]);
    const walkTo = Math.max(...DEPTHS.filter((d) => WALK_1M || d < 1_000_000));
    let orderViolations = 0;
    if (walkTo > 0) {
      const pages = walkTo / WALK_PAGE;
      const bar = progressBar(`walking cursors to depth ${int(walkTo)}`.padEnd(44), pages, 'pages');
      const walkStarted = Date.now();
      let cursor: string | null = null;
      let prev: ListItem | null = null;
      for (let page = 1; page <= pages; page++) {
        const body = await list(WALK_PAGE, cursor);
        for (const item of body.calls) {
          if (prev && !before(prev, item)) orderViolations++;
          prev = item;
        }
        if (!body.next_cursor) throw new Error(`the walk ended early at page ${page}`);
        cursor = body.next_cursor;
        const depth = page * WALK_PAGE;
        if (DEPTHS.includes(depth)) {
          cursors.set(depth, { cursor, from: `HTTP walk (${int(page)} pages of ${WALK_PAGE})` });
        }
        bar.update(page);
      }
      bar.stop();
      log(
        `  walked ${int(walkTo)} calls in ${seconds(walkStarted)}; order violations: ${orderViolations}`,
      );
    }
    let sqlCursorVerified = false;
    for (const depth of DEPTHS.filter((d) => d > 0)) {
      const built = await sqlCursor(depth);
      const walked = cursors.get(depth);
      if (walked) {
        if (walked.cursor !== built) {
          throw new Error(
            `the cursor built from SQL at depth ${depth} differs from the walked one`,
          );
        }
        sqlCursorVerified = true;
      } else {
        cursors.set(depth, {
          cursor: built,
          from: `SQL OFFSET ${int(depth - 1)} + CursorCodec`,
        });
      }
    }
    if (sqlCursorVerified) {
      log('  the SQL-built cursors equal the walked ones at every walked depth');
    }

    // 3b. Page latency over HTTP: interleaved rounds, one request per depth per round.
    const samples = new Map<number, number[]>(DEPTHS.map((d) => [d, []]));
    const firstIds = new Map<number, string | null>();
    const rounds = WARMUP_REQUESTS + SAMPLES;
    const latBar = progressBar(
      `page latency, limit=${PAGE}`.padEnd(44),
      rounds * DEPTHS.length,
      'requests',
    );
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < DEPTHS.length; k++) {
        const depth = DEPTHS[(round + k) % DEPTHS.length] as number;
        const cursor = cursors.get(depth)?.cursor ?? null;
        const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const t0 = performance.now();
        const res = await httpGet(`${apiBase}/api/v1/calls?limit=${PAGE}${q}`, auth);
        const ms = performance.now() - t0;
        if (res.status !== 200) throw new Error(`page at depth ${depth} → ${res.status}`);
        if (round === 0) {
          const body = parseList(res.body);
          if (body.calls.length !== PAGE) throw new Error(`short page at depth ${depth}`);
          firstIds.set(depth, body.calls[0]?.id ?? null);
        }
        if (round >= WARMUP_REQUESTS) samples.get(depth)?.push(ms);
        latBar.increment();
      }
    }
    latBar.stop();
    const depthResults: DepthResult[] = DEPTHS.map((depth) => ({
      depth,
      cursorFrom: cursors.get(depth)?.from ?? '',
      http: summarize(samples.get(depth) ?? []),
      firstId: firstIds.get(depth) ?? null,
    }));

    // 3c. The same work in-process, to see where an HTTP request's time goes.
    const calls = new CallsStore(knex, new CallLifecycle());
    const keys = new ApiKeysStore(knex);
    const positions = new Map<number, KeysetPosition | null>();
    for (const depth of DEPTHS) {
      const c = cursors.get(depth)?.cursor;
      positions.set(depth, c ? codec.decode('calls', tenantId, c) : null);
    }
    const deepest = DEPTHS[DEPTHS.length - 1] as number;
    const inProcess = await step('timing the queries in-process', async () => {
      const out: Record<string, LatencySummary> = {};
      out['auth: api key lookup'] = summarize(
        await timeSequential(SAMPLES, WARMUP_REQUESTS, async () => {
          await keys.findActiveByKey(seed.apiKey);
        }),
      );
      out['auth: touch last_used_at'] = summarize(
        await timeSequential(SAMPLES, WARMUP_REQUESTS, async () => {
          await keys.touch(seed.apiKeyId);
        }),
      );
      for (const depth of [0, deepest]) {
        out[`CallsStore.list, depth ${int(depth)}`] = summarize(
          await timeSequential(SAMPLES, WARMUP_REQUESTS, async () => {
            const page = await calls.list(
              tenantId,
              {},
              { limit: PAGE, after: positions.get(depth) },
            );
            if (page.rows.length !== PAGE) throw new Error('short page');
            if (page.rows[0]?.id !== firstIds.get(depth)) {
              throw new Error(`the store and the API disagree at depth ${depth}`);
            }
          }),
        );
      }
      return out;
    });

    // 3d. EXPLAIN (ANALYZE, BUFFERS) of the store's own SQL at the deepest depth.
    const statement = listCallsStatement(
      tenantId,
      {},
      { limit: PAGE, after: positions.get(deepest) },
    );
    const listSql = { sql: statement.text, bindings: statement.values };
    // Twice: the first run in this session also warms the planner's catalog caches.
    const explainOnce = async () =>
      (
        await pg.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, BUFFERS) ${listSql.sql}`,
          listSql.bindings,
        )
      ).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    await explainOnce();
    const plan = await explainOnce();
    const planChecks = {
      // The partitions' copies of the index are named calls_<partition>_tenant_id_started_at_id_idx;
      // a Merge Append's "Sort Key:" line is not a sort node (a node has its cost in brackets).
      usesTenantOrderIndex:
        /Index Scan( Backward)? using calls_(tenant_order_idx|\w+_tenant_id_started_at_id_idx)/.test(
          plan,
        ),
      hasSortNode: /^\s*(->\s*)?(Incremental )?Sort\s+\(cost=/m.test(plan),
    };

    // 4. Throughput with autocannon.
    const cannon = (
      title: string,
      url: string,
      headers: Record<string, string>,
      duration: number,
    ) => runCannon(title, { url, headers, connections: CONNECTIONS, title }, duration);
    interface Run {
      round: number;
      requestsPerSecond: number;
      totalRequests: number;
      latencyMs: { p50: number; p99: number; mean: number };
      /** CPU milliseconds per request in the server process and in all of Postgres. */
      cpuMsPerRequest: { server: number | null; postgres: number | null };
      loadavg1m: number;
      /** Answers other than 2xx, errors and timeouts (a run with any fails). */
      non2xx: number;
    }
    const measure = async (
      name: string,
      round: number,
      server: Child,
      url: string,
      headers: Record<string, string>,
    ): Promise<Run> => {
      await cannon(`${name} #${round}: warmup`, url, headers, WARMUP_S);
      const loadavg1m = Number(loadavg()[0]?.toFixed(2));
      const before = cpuSnapshot(server.proc.pid);
      const r = await cannon(
        `${name} #${round}: ${CONNECTIONS} connections`,
        url,
        headers,
        DURATION_S,
      );
      const after = cpuSnapshot(server.proc.pid);
      if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
        throw new Error(
          `${name}: ${r.non2xx} non-2xx responses, ${r.errors} errors, ${r.timeouts} timeouts`,
        );
      }
      const perRequest = (a: number | undefined, b: number | undefined) =>
        a === undefined || b === undefined || r.requests.total === 0
          ? null
          : Number((((b - a) * 1000) / r.requests.total).toFixed(3));
      return {
        round,
        requestsPerSecond: r.requests.average,
        totalRequests: r.requests.total,
        latencyMs: { p50: r.latency.p50, p99: r.latency.p99, mean: r.latency.mean },
        cpuMsPerRequest: {
          server: perRequest(before?.group, after?.group),
          postgres: perRequest(before?.postgres, after?.postgres),
        },
        loadavg1m,
        non2xx: r.non2xx + r.errors + r.timeouts,
      };
    };

    const barePort = await freePort();
    const bare = startTsChild('bare-server', compiled[BARE_SERVER] ?? BARE_SERVER, {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: benchUrl,
      PORT: String(barePort),
      BENCH_TENANT_ID: tenantId,
    });
    const bareBase = `http://127.0.0.1:${barePort}`;
    await step(`starting the bare Express server on port ${barePort}`, () =>
      waitForHttp(bare, `${bareBase}/healthz`),
    );
    // Rounds rotate the routes (and their order), so a burst of other work on the machine
    // does not land on one side only; the medians are compared.
    const routes = [
      {
        name: 'list',
        server: api,
        url: `${apiBase}/api/v1/calls?limit=${PAGE}`,
        headers: auth,
        runs: [] as Run[],
      },
      {
        name: 'bare',
        server: bare,
        url: `${bareBase}/calls/random`,
        headers: {},
        runs: [] as Run[],
      },
      {
        name: 'bare-page',
        server: bare,
        url: `${bareBase}/calls/page`,
        headers: {},
        runs: [] as Run[],
      },
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      for (let k = 0; k < routes.length; k++) {
        const r = routes[(round - 1 + k) % routes.length] as (typeof routes)[number];
        r.runs.push(await measure(r.name, round, r.server, r.url, r.headers));
      }
    }
    const [listRuns, bareRuns, barePageRuns] = routes.map((r) => r.runs) as [Run[], Run[], Run[]];
    await step('stopping the servers', stopAllChildren);
    const summarizeRuns = (path: string, runs: Run[]) => ({
      path,
      requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
      latencyMsP50: median(runs.map((r) => r.latencyMs.p50)),
      latencyMsP99: median(runs.map((r) => r.latencyMs.p99)),
      cpuMsPerRequest: {
        server: median(runs.map((r) => r.cpuMsPerRequest.server ?? Number.NaN)),
        postgres: median(runs.map((r) => r.cpuMsPerRequest.postgres ?? Number.NaN)),
      },
      runs,
    });
    const listThroughput = summarizeRuns(`GET /api/v1/calls?limit=${PAGE}`, listRuns);
    const bareThroughput = summarizeRuns('GET /calls/random (one SELECT by PK)', bareRuns);
    const barePageThroughput = summarizeRuns(
      'GET /calls/page (CallsStore.list + render, no middleware)',
      barePageRuns,
    );

    // 5. Report.
    const d0 = depthResults[0]?.http.p50 ?? Number.NaN;
    const dN = depthResults[depthResults.length - 1]?.http.p50 ?? Number.NaN;
    const depthRatio = dN / d0;
    const throughputRatio = listThroughput.requestsPerSecond / bareThroughput.requestsPerSecond;
    const targets = {
      depth: {
        description: `p50 at depth ${int(deepest)} ≤ ${TARGET_DEPTH_RATIO} × p50 at depth 0`,
        ratio: Number(depthRatio.toFixed(3)),
        target: TARGET_DEPTH_RATIO,
        met: depthRatio <= TARGET_DEPTH_RATIO,
      },
      throughput: {
        description: `list req/s ≥ ${TARGET_THROUGHPUT_RATIO} × bare route req/s`,
        ratio: Number(throughputRatio.toFixed(3)),
        target: TARGET_THROUGHPUT_RATIO,
        met: throughputRatio >= TARGET_THROUGHPUT_RATIO,
      },
    };

    const report = [
      '',
      `Call history benchmark (issue 3): ${int(SPEC.total)} calls, ${SPEC.tenants} tenants × ${SPEC.receptionistsPerTenant} receptionists, big tenant ${int(SPEC.bigTenantCalls)}`,
      `seed: ${seed.skipped ? 'reused (already present)' : `loaded in ${fmt(seed.seconds, 1)} s (COPY ${fmt(seed.copySeconds ?? Number.NaN, 1)} s)`}; calls table ${seed.sizes.calls ?? '?'} with indexes`,
      `machine: ${machine.nproc} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}, ${postgres.version.split(' on ')[0]}`,
      '',
      `Page latency over HTTP: GET /api/v1/calls?limit=${PAGE}, ${SAMPLES} sequential requests per depth (after ${WARMUP_REQUESTS} warmup), depths interleaved, one keep-alive connection`,
      table([
        ['depth', 'cursor from', 'p50 ms', 'p90 ms', 'p99 ms', 'mean ms'],
        ...depthResults.map((r) => [
          int(r.depth),
          r.cursorFrom,
          fmt(r.http.p50),
          fmt(r.http.p90),
          fmt(r.http.p99),
          fmt(r.http.mean),
        ]),
      ]),
      '',
      `Inside one process (same knex pool settings), ${SAMPLES} sequential calls each`,
      table([
        ['query', 'p50 ms', 'p99 ms'],
        ...Object.entries(inProcess).map(([k, v]) => [k, fmt(v.p50), fmt(v.p99)]),
      ]),
      '',
      `EXPLAIN (ANALYZE, BUFFERS) of CallsStore.list at depth ${int(deepest)} (limit ${PAGE}):`,
      plan,
      `→ index scan on calls_tenant_order_idx: ${planChecks.usesTenantOrderIndex ? 'yes' : 'NO'}; sort node: ${planChecks.hasSortNode ? 'YES' : 'none'}`,
      '',
      `Throughput (autocannon, ${CONNECTIONS} connections, ${DURATION_S} s after a ${WARMUP_S} s warmup, ${ROUNDS} rotating rounds, medians)`,
      table([
        [
          'route',
          'req/s',
          'p50 ms',
          'p99 ms',
          'CPU ms/req server',
          'CPU ms/req postgres',
          'req/s per round',
        ],
        ...[
          ['API ', listThroughput] as const,
          ['bare', bareThroughput] as const,
          ['bare', barePageThroughput] as const,
        ].map(([who, t]) => [
          `${who} ${t.path}`,
          fmt(t.requestsPerSecond, 0),
          fmt(t.latencyMsP50, 0),
          fmt(t.latencyMsP99, 0),
          fmt(t.cpuMsPerRequest.server, 3),
          fmt(t.cpuMsPerRequest.postgres, 3),
          t.runs.map((r) => fmt(r.requestsPerSecond, 0)).join(' / '),
        ]),
      ]),
      `non-2xx answers: ${[...listRuns, ...bareRuns, ...barePageRuns].reduce((n, r) => n + r.non2xx, 0)} (the measured key's limit is lifted)`,
      `(informational: the API reaches ${fmt(listThroughput.requestsPerSecond / barePageThroughput.requestsPerSecond)} × the req/s of the same page work without its middleware)`,
      '',
      'Targets',
      table([
        ['target', 'measured', 'result'],
        [targets.depth.description, `${fmt(depthRatio)} ×`, targets.depth.met ? 'MET' : 'MISSED'],
        [
          targets.throughput.description,
          `${fmt(throughputRatio)} ×`,
          targets.throughput.met ? 'MET' : 'MISSED',
        ],
      ]),
    ];
    if (!WALK_1M && DEPTHS.includes(1_000_000)) {
      report.push(
        '',
        'The depth-1,000,000 cursor was built from the row at OFFSET 999,999 (one SQL query) and encoded',
        "with the API's CursorCodec and the same CURSOR_SECRET: exactly the next_cursor the server returns",
        `there (checked against the walked cursors at ${DEPTHS.filter((d) => d > 0 && d < 1_000_000)
          .map(int)
          .join(' and ')}). BENCH_WALK_1M=1 walks instead.`,
      );
    }
    process.stdout.write(`${report.join('\n')}\n`);

    const result = {
      benchmark: 'calls',
      command: 'npm run bench:calls',
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      postgres,
      seed: {
        spec: SPEC,
        skipped: seed.skipped,
        seconds: seed.seconds,
        copySeconds: seed.copySeconds,
        bigTenantId: tenantId,
        apiKeyId: seed.apiKeyId,
        tenants: seed.tenants,
        sizes: seed.sizes,
      },
      walk: { pageSize: WALK_PAGE, walkedTo: walkTo, orderViolations, sqlCursorVerified },
      pageLatency: {
        limit: PAGE,
        samplesPerDepth: SAMPLES,
        warmup: WARMUP_REQUESTS,
        depths: depthResults,
      },
      inProcess,
      explain: { depth: deepest, sql: listSql.sql, plan, ...planChecks },
      throughput: {
        connections: CONNECTIONS,
        durationSeconds: DURATION_S,
        warmupSeconds: WARMUP_S,
        rounds: ROUNDS,
        list: listThroughput,
        bare: bareThroughput,
        barePage: barePageThroughput,
        ratio: Number(throughputRatio.toFixed(3)),
      },
      targets,
    };
    saveResult('calls', startedAt, result, log);
    return 0;
  } finally {
    await stopAllChildren();
    closeHttpAgent();
    await Promise.allSettled([pg.end(), knex.destroy()]);
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(
      `\ncalls benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    await stopAllChildren();
    process.exit(1);
  },
);
