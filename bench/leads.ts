/**
 * Leads at scale (issue 13): `npm run bench:leads`.
 *
 * 1. Seeds `switchboard_bench_leads` by COPY (reused by later runs): a tenant with 1,000,000
 *    leads and one with 10,000, from the same generator (bench/leads/rows.ts).
 * 2. Starts the real API and times GET /api/v1/leads/search over HTTP for each case of
 *    bench/leads/search.ts on both tenants (p50 ratio 1M / 10k), with the EXPLAIN (ANALYZE,
 *    BUFFERS) of the store's exact SQL on the big tenant.
 * 3. In a fresh `switchboard_bench_leads_import`: a 100,000-row CSV imported by the real
 *    import code (stageFile + runImport, batches of 1000, events included) vs a plain
 *    multi-row INSERT … ON CONFLICT loop of the same rows, from this process, alternating.
 * 4. The API's resident memory while a 2 MiB and a 20 MiB file are uploaded to it.
 *
 * Knobs (env): BENCH_RESEED=1, BENCH_LEADS_BIG (1000000), BENCH_SAMPLES (100),
 * BENCH_IMPORT_ROWS (100000), BENCH_ROUNDS (2).
 */
import { randomBytes } from 'node:crypto';
import { ApiKeysStore, createKnex, TenantsStore } from '@switchboard/db';
import { installChildCleanup, startTsChild, stopAllChildren, waitForHttp } from './lib/children';
import { envInt, UNLIMITED_API_RATE } from './lib/env';
import { closeHttpAgent, freePort } from './lib/http';
import { machineInfo } from './lib/machine';
import { log, step } from './lib/progress';
import { saveResult } from './lib/results';
import { median, table, type LatencySummary } from './lib/stats';
import { makeCsv, timeImport, timeInsertLoop, type ImportRun } from './leads/import';
import { uploadAndSample, type UploadMemory } from './leads/memory';
import { explainSearches, SEARCH_CASES, timeSearches, usesSeqScan } from './leads/search';
import { ensureLeadSeed, freshDatabase, randomSecret, smallTenantKey } from './leads/seed';
import { compileForBench, serviceEntry } from './lib/compiled';

const SPEC = {
  version: 1,
  big: envInt('BENCH_LEADS_BIG', 1_000_000),
  small: 10_000,
  prngSeed: 1313,
};
const SAMPLES = envInt('BENCH_SAMPLES', 100);
const IMPORT_ROWS = envInt('BENCH_IMPORT_ROWS', 100_000);
const ROUNDS = envInt('BENCH_ROUNDS', 2);
const SEARCH_DB = 'switchboard_bench_leads';
const IMPORT_DB = 'switchboard_bench_leads_import';
const fmt = (n: number, d = 2) =>
  n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

function startApi(databaseUrl: string, port: number, prefix: string) {
  return startTsChild('api', serviceEntry('apps/api/dist/server.js'), {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    QUEUE_PREFIX: prefix,
    INGEST_TOKEN: randomSecret(),
    CURSOR_SECRET: randomSecret(),
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...UNLIMITED_API_RATE,
  });
}

async function main(): Promise<number> {
  const startedAt = new Date();
  installChildCleanup();
  const machine = machineInfo();
  log(
    `leads benchmark: ${SPEC.big.toLocaleString('en-US')} + ${SPEC.small.toLocaleString('en-US')} leads; nproc ${machine.nproc}; load ${machine.loadavg.join(' ')}`,
  );
  const prefix = `{sbbench${randomBytes(3).toString('hex')}}`;
  await compileForBench();

  // 1-2. Search.
  const seed = await step('seed', () =>
    ensureLeadSeed(SEARCH_DB, SPEC, process.env.BENCH_RESEED === '1'),
  );
  const searchUrl = await freshDatabase(SEARCH_DB, false);
  const port = await freePort();
  const api = startApi(searchUrl, port, prefix);
  const base = `http://127.0.0.1:${port}`;
  await step('starting the API', () => waitForHttp(api, `${base}/healthz`));
  const smallKey = await smallTenantKey(SEARCH_DB);
  const [big, small] = (await step('searches on both tenants, interleaved', () =>
    timeSearches(base, [seed.apiKey, smallKey], SAMPLES, 10),
  )) as [Map<string, LatencySummary>, Map<string, LatencySummary>];
  await api.stop();
  const plans = await step('EXPLAIN on the 1M tenant', () =>
    explainSearches(searchUrl, seed.bigTenantId),
  );
  const searchRows = SEARCH_CASES.map((c) => {
    const b = big.get(c.label);
    const s = small.get(c.label);
    const plan = plans.get(c.label) ?? '';
    return {
      case: c.label,
      p50_1m: b?.p50 ?? NaN,
      p90_1m: b?.p90 ?? NaN,
      p50_10k: s?.p50 ?? NaN,
      ratio: (b?.p50 ?? NaN) / (s?.p50 ?? NaN),
      seqScan: usesSeqScan(plan),
      planTop: plan.split('\n').slice(0, 3).join(' / '),
    };
  });

  // 3. Import vs insert loop.
  const importUrl = await step('fresh import database', () => freshDatabase(IMPORT_DB, true));
  const { csv, rows } = makeCsv(IMPORT_ROWS, 5_000_000_000);
  log(
    `  CSV: ${IMPORT_ROWS.toLocaleString('en-US')} rows, ${(csv.length / 2 ** 20).toFixed(1)} MiB`,
  );
  const runs: ImportRun[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const pair = round % 2 ? ['loop', 'import'] : ['import', 'loop'];
    for (const which of pair) {
      runs.push(
        await step(`round ${round}: ${which}`, () =>
          which === 'loop'
            ? timeInsertLoop(importUrl, rows)
            : timeImport(importUrl, csv, IMPORT_ROWS),
        ),
      );
    }
  }
  const importRate = median(runs.filter((r) => r.method === 'import').map((r) => r.rowsPerSecond));
  const loopRate = median(
    runs.filter((r) => r.method === 'insert loop').map((r) => r.rowsPerSecond),
  );

  // 4. API memory while uploading.
  const knex = createKnex(importUrl, { poolMax: 1 });
  const tenant = await new TenantsStore(knex).create({ name: 'Upload bench' });
  const { key } = await new ApiKeysStore(knex).create({ tenantId: tenant.id, scopes: ['write'] });
  await knex.destroy();
  const uploadPort = await freePort();
  const uploadApi = startApi(importUrl, uploadPort, prefix);
  const uploadBase = `http://127.0.0.1:${uploadPort}`;
  await step('starting the API for uploads', () => waitForHttp(uploadApi, `${uploadBase}/healthz`));
  const uploads: UploadMemory[] = [];
  for (const mib of [2, 20]) {
    const target = mib * 2 ** 20 - 1024;
    const n = Math.floor((target / csv.length) * IMPORT_ROWS);
    const file = makeCsv(n, 6_000_000_000).csv.subarray(0, target);
    const cut = file.lastIndexOf(10) + 1;
    uploads.push(
      await step(`upload of ${mib} MiB`, () =>
        uploadAndSample(uploadBase, key, uploadApi.proc.pid as number, file.subarray(0, cut)),
      ),
    );
  }
  await uploadApi.stop();

  const out = [
    table([
      ['search (limit 10)', 'p50 1M ms', 'p90 1M ms', 'p50 10k ms', 'ratio', 'seq scan'],
      ...searchRows.map((r) => [
        r.case,
        fmt(r.p50_1m),
        fmt(r.p90_1m),
        fmt(r.p50_10k),
        fmt(r.ratio),
        r.seqScan ? 'YES' : 'no',
      ]),
    ]),
    '',
    table([
      ['write path', 'rows', 'seconds', 'rows/s', 'stage s'],
      ...runs.map((r) => [
        r.method,
        String(r.rows),
        fmt(r.seconds),
        fmt(r.rowsPerSecond, 0),
        r.stageSeconds ? fmt(r.stageSeconds) : '',
      ]),
    ]),
    `import / insert loop (medians): ${fmt(importRate, 0)} / ${fmt(loopRate, 0)} rows/s = ${fmt(importRate / loopRate)}`,
    '',
    table([
      ['upload', 'status', 'seconds', 'RSS before MiB', 'RSS peak MiB', 'RSS after MiB'],
      ...uploads.map((u) => [
        `${(u.bytes / 2 ** 20).toFixed(1)} MiB`,
        String(u.status),
        fmt(u.seconds),
        fmt(u.rssBeforeMiB, 1),
        fmt(u.rssPeakMiB, 1),
        fmt(u.rssAfterMiB, 1),
      ]),
    ]),
  ].join('\n');
  process.stdout.write(`${out}\n`);
  for (const [label, plan] of plans) process.stdout.write(`\n-- ${label}\n${plan}\n`);
  saveResult(
    'leads',
    startedAt,
    {
      machine,
      spec: SPEC,
      seed,
      searchRows,
      plans: Object.fromEntries(plans),
      runs,
      importRate,
      loopRate,
      uploads,
    },
    log,
  );
  return 0;
}

main()
  .catch((err: unknown) => {
    log(`bench:leads failed: ${(err as Error).stack ?? String(err)}`);
    return 1;
  })
  .then(async (code) => {
    await stopAllChildren();
    closeHttpAgent();
    process.exit(code);
  });
