import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import {
  ApiKeysStore,
  createKnex,
  migrateLatest,
  ReceptionistsStore,
  TenantsStore,
  type Knex,
} from '@switchboard/db';
import { log, progressBar, seconds, sleep, step } from '../lib/progress';
import { CallRowGenerator, COPY_COLUMNS, type SeedTenant } from './rows';
import { localDatabase, withClient } from '../lib/database';

/** What the database must hold; stored as the marker, so a changed spec means a reseed. */
export interface SeedSpec {
  /** Bump when the row generator changes in a way that matters. */
  version: number;
  total: number;
  tenants: number;
  receptionistsPerTenant: number;
  bigTenantCalls: number;
  prngSeed: number;
}

export interface SeedResult {
  skipped: boolean;
  seconds: number;
  copySeconds: number | null;
  bigTenantId: string;
  tenants: { id: string; name: string; calls: number }[];
  apiKey: string;
  apiKeyId: string;
  sizes: Record<string, string>;
}

const MARKER = 'bench_seed';
const DAY_MS = 86_400_000;
const SPAN_MS = 365 * DAY_MS;
/** What a constraint or index name read back must look like before it is spliced into DDL. */
const NAME_OK = /^[a-z0-9_]+$/;
const RECEPTIONIST_NAMES = ['Front Desk', 'After Hours', 'Emergency Line', 'Sales', 'Billing'];

/** The bench database's URL: the admin URL with another database name (127.0.0.1 only). */
export function databaseUrls(): { adminUrl: string; benchUrl: string; dbName: string } {
  const dbName = process.env.BENCH_DATABASE_NAME ?? 'switchboard_bench';
  const { adminUrl, url } = localDatabase(dbName, 'BENCH_DATABASE_NAME');
  return { adminUrl, benchUrl: url, dbName };
}

interface MarkerRow {
  big_tenant_id: string;
  tenants: { id: string; name: string; calls: number }[];
  api_key: string | null;
  api_key_id: string | null;
}

/** The marker, if the database holds exactly the seed it describes. */
async function validMarker(knex: Knex, spec: SeedSpec): Promise<MarkerRow | null> {
  const exists = (await knex.raw('SELECT to_regclass(?) AS t', [MARKER])) as {
    rows: { t: string | null }[];
  };
  if (!exists.rows[0]?.t) return null;
  const marker = (await knex(MARKER)
    .where({ spec: JSON.stringify(spec) })
    .first()) as MarkerRow | undefined;
  if (!marker) return null;
  const counts = (await knex('calls')
    .select('tenant_id')
    .count({ n: '*' })
    .groupBy('tenant_id')) as {
    tenant_id: string;
    n: string;
  }[];
  const byTenant = new Map(counts.map((r) => [r.tenant_id, Number(r.n)]));
  const exact =
    byTenant.size === marker.tenants.length &&
    marker.tenants.every((t) => byTenant.get(t.id) === t.calls);
  return exact ? marker : null;
}

/** Seeds tenants and receptionists through the stores, the way the CLI does. */
async function seedTenants(knex: Knex, spec: SeedSpec): Promise<SeedTenant[]> {
  const tenants = new TenantsStore(knex);
  const receptionists = new ReceptionistsStore(knex);
  const others = spec.tenants - 1;
  const otherCalls = Math.floor((spec.total - spec.bigTenantCalls) / others);
  const out: SeedTenant[] = [];
  for (let i = 0; i < spec.tenants; i++) {
    const calls =
      i === 0
        ? spec.bigTenantCalls
        : i === others
          ? spec.total - spec.bigTenantCalls - otherCalls * (others - 1)
          : otherCalls;
    const tenant = await tenants.create({
      name: `Bench Tenant ${String(i + 1).padStart(2, '0')}${i === 0 ? ' (big)' : ''}`,
      planMinutes: 100_000,
    });
    const rcps = [];
    for (let r = 0; r < spec.receptionistsPerTenant; r++) {
      const phone = `+1${200 + i}555${String(r).padStart(4, '0')}`;
      const created = await receptionists.create({
        tenantId: tenant.id,
        name: receptionistName(r),
        status: 'ready',
        phoneNumber: phone,
        assistantId: `asst_bench_${i}_${r}`,
        plan: 'standard',
        greeting: 'Thanks for calling, how can I help?',
        provisionedAt: new Date(),
      });
      rcps.push({ id: created.id, phone });
    }
    out.push({ id: tenant.id, calls, receptionists: rcps });
  }
  return out;
}

function receptionistName(r: number): string {
  return `${RECEPTIONIST_NAMES[r % RECEPTIONIST_NAMES.length]} ${Math.floor(r / RECEPTIONIST_NAMES.length) + 1}`;
}

interface Definitions {
  constraints: { name: string; def: string; type: string }[];
  indexes: { name: string; def: string }[];
}

/** The calls table's keys and indexes as the migrations made them, to rebuild them verbatim. */
async function captureDefinitions(c: Client): Promise<Definitions> {
  const constraints = await c.query<{ name: string; def: string; type: string }>(
    `SELECT conname AS name, pg_get_constraintdef(oid) AS def, contype::text AS type
       FROM pg_constraint WHERE conrelid = 'calls'::regclass AND contype IN ('p', 'u', 'f')`,
  );
  const indexes = await c.query<{ name: string; def: string }>(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS def
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
      WHERE x.indrelid = 'calls'::regclass
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k
                         WHERE k.conindid = x.indexrelid AND k.contype IN ('p', 'u', 'x'))`,
  );
  for (const { name } of [...constraints.rows, ...indexes.rows]) {
    if (!NAME_OK.test(name)) throw new Error(`unexpected constraint or index name ${name}`);
  }
  return { constraints: constraints.rows, indexes: indexes.rows };
}

async function dropDefinitions(c: Client, d: Definitions): Promise<void> {
  for (const k of d.constraints.filter((k) => k.type === 'f')) {
    await c.query(`ALTER TABLE calls DROP CONSTRAINT "${k.name}"`);
  }
  for (const i of d.indexes) await c.query(`DROP INDEX "${i.name}"`);
  for (const k of d.constraints.filter((k) => k.type !== 'f')) {
    await c.query(`ALTER TABLE calls DROP CONSTRAINT "${k.name}"`);
  }
}

const INDEX_PROGRESS = `
  SELECT phase, CASE
    WHEN phase LIKE 'building index: scanning table%' AND blocks_total > 0
      THEN 60.0 * blocks_done / blocks_total
    WHEN phase LIKE 'building index: sorting%' THEN 60
    WHEN phase LIKE 'building index: loading tuples%' AND tuples_total > 0
      THEN 60 + 40.0 * tuples_done / tuples_total
    ELSE 0 END::float8 AS pct
  FROM pg_stat_progress_create_index WHERE pid = $1`;
const VACUUM_PROGRESS = `
  SELECT phase, CASE WHEN heap_blks_total > 0
    THEN 100.0 * heap_blks_scanned / heap_blks_total ELSE 0 END::float8 AS pct
  FROM pg_stat_progress_vacuum WHERE pid = $1`;

/**
 * Runs one long statement on `work` with a progress bar fed from Postgres's own progress
 * views (polled on `monitor`), or an elapsed-time bar when Postgres reports none.
 */
async function monitored(
  label: string,
  work: { client: Client; pid: number },
  monitor: Client,
  sql: string,
  progressSql: string | null,
): Promise<void> {
  const bar = progressBar(label.padEnd(44), 100, '%');
  let finished = false;
  const run = work.client.query(sql).finally(() => {
    finished = true;
  });
  while (!finished) {
    await Promise.race([
      run.then(
        () => undefined,
        () => undefined,
      ),
      sleep(500),
    ]);
    if (finished) break;
    if (progressSql) {
      const r = await monitor.query<{ phase: string; pct: number }>(progressSql, [work.pid]);
      const row = r.rows[0];
      if (row) bar.update(Math.min(99, Math.floor(row.pct)), { note: ` | ${row.phase}` });
    } else {
      bar.update({ note: ' | (Postgres reports no progress for this step)' });
    }
  }
  bar.update(100, { note: '' });
  bar.stop();
  await run;
}

async function bulkLoad(
  url: string,
  tenants: SeedTenant[],
  spec: SeedSpec,
): Promise<{ copySeconds: number }> {
  return withClient(url, (work) =>
    withClient(url, async (monitor) => {
      const pidRow = await work.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const w = { client: work, pid: (pidRow.rows[0] as { pid: number }).pid };
      await work.query(`SET maintenance_work_mem = '1GB'`);
      await work.query(`SET synchronous_commit = off`);
      const defs = await captureDefinitions(work);
      log(
        `  dropping ${defs.constraints.length} constraints and ${defs.indexes.length} indexes of calls for the load (rebuilt after)`,
      );
      await dropDefinitions(work, defs);
      // The uniqueness trigger (provider call id, idempotency key) takes an advisory lock and
      // looks the key up for every row: 2 M locks in one COPY exhaust the lock table, and
      // without the indexes each lookup is a scan. The seed's keys are unique by construction.
      await work.query('ALTER TABLE calls DISABLE TRIGGER USER');

      const startMs = Math.floor(Date.now() / DAY_MS) * DAY_MS - SPAN_MS - 2 * DAY_MS;
      const gen = new CallRowGenerator(tenants, { seed: spec.prngSeed, startMs, spanMs: SPAN_MS });
      const bar = progressBar('COPY calls'.padEnd(44), spec.total, 'calls');
      const CHUNK = 2000;
      function* chunks(): Generator<string> {
        let done = 0;
        let buf: string[] = [];
        for (let line = gen.next(); line !== null; line = gen.next()) {
          buf.push(line);
          if (buf.length === CHUNK) {
            done += buf.length;
            bar.update(done);
            yield buf.join('');
            buf = [];
          }
        }
        if (buf.length) {
          bar.update(done + buf.length);
          yield buf.join('');
        }
      }
      const copyStarted = Date.now();
      await pipeline(
        Readable.from(chunks(), { objectMode: false }),
        work.query(copyFrom(`COPY calls (${COPY_COLUMNS.join(', ')}) FROM STDIN`)),
      );
      bar.stop();
      const copySeconds = (Date.now() - copyStarted) / 1000;
      log(`  COPY: ${spec.total.toLocaleString('en-US')} calls in ${copySeconds.toFixed(1)} s`);

      for (const k of defs.constraints.filter((k) => k.type !== 'f')) {
        await monitored(
          `constraint ${k.name}`,
          w,
          monitor,
          `ALTER TABLE calls ADD CONSTRAINT "${k.name}" ${k.def}`,
          INDEX_PROGRESS,
        );
      }
      for (const i of defs.indexes) {
        // A partitioned table's index is defined `ON ONLY calls` (the parent alone, invalid
        // until every partition has one): rebuilt `ON calls`, it is built on every partition.
        const def = i.def.replace(/ ON ONLY /, ' ON ');
        await monitored(`index ${i.name}`, w, monitor, def, INDEX_PROGRESS);
      }
      for (const k of defs.constraints.filter((k) => k.type === 'f')) {
        await monitored(
          `foreign key ${k.name}`,
          w,
          monitor,
          `ALTER TABLE calls ADD CONSTRAINT "${k.name}" ${k.def}`,
          null,
        );
      }
      await work.query('ALTER TABLE calls ENABLE TRIGGER USER');
      // Sets hint bits and the visibility map now, so the first measured reads do not.
      await monitored(
        'VACUUM (FREEZE) calls',
        w,
        monitor,
        'VACUUM (FREEZE) calls',
        VACUUM_PROGRESS,
      );
      await step('ANALYZE', () => work.query('ANALYZE'));
      return { copySeconds };
    }),
  );
}

async function createDatabase(adminUrl: string, dbName: string, dropFirst: boolean): Promise<void> {
  await withClient(adminUrl, async (c) => {
    if (dropFirst) await c.query(`DROP DATABASE IF EXISTS "${dbName}"`);
    await c.query(`CREATE DATABASE "${dbName}"`);
  });
}

/** A read key of the big tenant, minted with the store (reused while it is still active). */
async function ensureApiKey(
  knex: Knex,
  spec: SeedSpec,
  marker: MarkerRow,
): Promise<{ key: string; id: string }> {
  const keys = new ApiKeysStore(knex);
  if (marker.api_key && marker.api_key_id && (await keys.findActiveByKey(marker.api_key))) {
    return { key: marker.api_key, id: marker.api_key_id };
  }
  const { apiKey, key } = await keys.create({
    tenantId: marker.big_tenant_id,
    scopes: ['read'],
    name: 'calls benchmark',
  });
  await knex(MARKER)
    .where({ spec: JSON.stringify(spec) })
    .update({ api_key: key, api_key_id: apiKey.id });
  return { key, id: apiKey.id };
}

/** The calls table and each of its indexes, every partition's part summed in. */
async function sizes(knex: Knex): Promise<Record<string, string>> {
  const r = (await knex.raw(
    `SELECT 'calls' AS name, pg_size_pretty(sum(pg_total_relation_size(relid))) AS size
       FROM pg_partition_tree('calls')
     UNION ALL
     SELECT i.relname, pg_size_pretty(sum(pg_relation_size(t.relid)))
       FROM pg_class i CROSS JOIN LATERAL pg_partition_tree(i.oid) t
      WHERE i.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'calls'::regclass)
      GROUP BY i.relname
      ORDER BY 1`,
  )) as { rows: { name: string; size: string }[] };
  return Object.fromEntries(r.rows.map((x) => [x.name, x.size]));
}

/**
 * Makes sure the bench database holds exactly the seed `spec` describes: reuses it when the
 * marker and the counts match, else recreates the database and bulk-loads it.
 */
export async function ensureSeed(spec: SeedSpec, force: boolean): Promise<SeedResult> {
  const started = Date.now();
  const { adminUrl, benchUrl, dbName } = databaseUrls();
  const exists = await withClient(adminUrl, async (c) => {
    const r = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
    return r.rowCount === 1;
  });
  if (!exists) {
    log(`  creating database ${dbName}`);
    await createDatabase(adminUrl, dbName, false);
  }
  let knex = createKnex(benchUrl, { poolMax: 4 });
  try {
    await migrateLatest(knex);
    let marker = force
      ? null
      : await step('checking the existing seed', () => validMarker(knex, spec));
    const skipped = marker !== null;
    let copySeconds: number | null = null;
    if (marker) {
      log(
        `  ${dbName} already holds this seed (${spec.total.toLocaleString('en-US')} calls): skipping the load`,
      );
    } else {
      if (exists) {
        log(
          `  ${dbName} does not hold this seed${force ? ' (BENCH_RESEED=1)' : ''}: recreating it`,
        );
        await knex.destroy();
        await createDatabase(adminUrl, dbName, true);
        knex = createKnex(benchUrl, { poolMax: 4 });
        await migrateLatest(knex);
      }
      const seedStarted = Date.now();
      const tenants = await step('creating 10 tenants and their receptionists', () =>
        seedTenants(knex, spec),
      );
      ({ copySeconds } = await bulkLoad(benchUrl, tenants, spec));
      await knex.schema.createTable(MARKER, (t) => {
        t.text('spec').primary();
        t.text('big_tenant_id').notNullable();
        t.jsonb('tenants').notNullable();
        t.text('api_key');
        t.text('api_key_id');
        t.float('seed_seconds');
        t.timestamp('seeded_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      });
      const tenantNames = (await knex('tenants').select('id', 'name')) as {
        id: string;
        name: string;
      }[];
      const names = new Map(tenantNames.map((t) => [t.id, t.name]));
      await knex(MARKER).insert({
        spec: JSON.stringify(spec),
        big_tenant_id: (tenants[0] as SeedTenant).id,
        tenants: JSON.stringify(
          tenants.map((t) => ({ id: t.id, name: names.get(t.id) ?? '', calls: t.calls })),
        ),
        seed_seconds: (Date.now() - seedStarted) / 1000,
      });
      log(`  seed complete in ${seconds(seedStarted)}`);
      marker = (await validMarker(knex, spec)) as MarkerRow;
      if (!marker) throw new Error('the seed does not match its own marker');
    }
    const { key, id } = await ensureApiKey(knex, spec, marker);
    return {
      skipped,
      seconds: (Date.now() - started) / 1000,
      copySeconds,
      bigTenantId: marker.big_tenant_id,
      tenants: marker.tenants,
      apiKey: key,
      apiKeyId: id,
      sizes: await sizes(knex),
    };
  } finally {
    await knex.destroy();
  }
}
