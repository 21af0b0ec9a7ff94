import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import {
  ApiKeysStore,
  createKnex,
  migrateLatest,
  ReceptionistsStore,
  TenantsStore,
  type Knex,
} from '@switchboard/db';
import { aggregateCountedCalls } from '../../packages/db/src/migrations/008_provisioning_usage';
import { log, progressBar, step } from '../lib/progress';
import { localDatabase, withClient } from '../lib/database';

/**
 * The usage benchmark's database: a big tenant with `bigCalls` calls ending in one month
 * and a small one with `smallCalls`, loaded by COPY and counted with migration 008's own
 * aggregation (as an upgraded deployment gets its counters). Reused while the marker matches.
 */
export interface UsageSeedSpec {
  version: number;
  bigCalls: number;
  smallCalls: number;
  receptionists: number;
  /** Other tenants with a receptionist and counters, so the tables are not trivially small. */
  otherTenants: number;
}

export interface UsageSeed {
  benchUrl: string;
  dbName: string;
  /** YYYY-MM of the month the calls ended in. */
  period: string;
  big: { tenantId: string; apiKey: string };
  small: { tenantId: string; apiKey: string };
  skipped: boolean;
}

const MARKER = 'bench_usage_seed';
const COLUMNS = [
  'id',
  'tenant_id',
  'receptionist_id',
  'direction',
  'status',
  'from_number',
  'to_number',
  'duration_seconds',
  'outcome',
  'end_reason',
  'started_at',
  'ended_at',
  'counted_minutes',
];

export function databaseUrls(): { adminUrl: string; benchUrl: string; dbName: string } {
  const dbName = process.env.BENCH_DATABASE_NAME ?? 'switchboard_bench_usage';
  const { adminUrl, url } = localDatabase(dbName, 'BENCH_DATABASE_NAME');
  return { adminUrl, benchUrl: url, dbName };
}

/** COPY lines of `count` calls ending in `month` (70 % completed, the rest missed or busy). */
function* callLines(
  tenantId: string,
  receptionists: string[],
  count: number,
  monthStart: Date,
  onChunk: (done: number) => void,
): Generator<string> {
  const spanMs = 27 * 86_400_000;
  let buf: string[] = [];
  for (let i = 0; i < count; i++) {
    const ended = new Date(monthStart.getTime() + ((i * 7919) % spanMs));
    const kind = i % 10;
    const completed = kind < 7;
    const seconds = completed ? 20 + ((i * 31) % 600) : 0;
    const started = new Date(ended.getTime() - seconds * 1000);
    buf.push(
      [
        `call_${randomUUID().replace(/-/g, '')}`,
        tenantId,
        receptionists[i % receptionists.length],
        kind === 9 ? 'outbound' : 'inbound',
        completed ? 'completed' : kind === 9 ? 'busy' : 'missed',
        '+14155550100',
        '+14155550199',
        seconds,
        completed ? 'booked' : 'no_outcome',
        completed ? 'caller_hangup' : kind === 9 ? 'busy' : 'abandoned',
        started.toISOString(),
        ended.toISOString(),
        completed ? String(Math.ceil(seconds / 60)) : '\\N',
      ].join('\t') + '\n',
    );
    if (buf.length === 2000) {
      onChunk(i + 1);
      yield buf.join('');
      buf = [];
    }
  }
  if (buf.length) {
    onChunk(count);
    yield buf.join('');
  }
}

async function tenantWithReceptionists(knex: Knex, name: string, n: number) {
  const tenant = await new TenantsStore(knex).create({ name, planMinutes: 1_000_000 });
  const receptionists: string[] = [];
  for (let r = 0; r < n; r++) {
    const created = await new ReceptionistsStore(knex).create({
      tenantId: tenant.id,
      name: `Desk ${r + 1}`,
      status: 'ready',
      phoneNumber: `+1415555${String(r).padStart(4, '0')}`,
    });
    receptionists.push(created.id);
  }
  const { key } = await new ApiKeysStore(knex).create({ tenantId: tenant.id, scopes: ['read'] });
  return { tenantId: tenant.id, apiKey: key, receptionists };
}

/** Tenants that are not measured: one receptionist and this month's counters each. */
async function otherTenants(knex: Knex, n: number, monthStart: Date): Promise<void> {
  await knex.raw(
    `INSERT INTO tenants (id, name, plan_minutes)
     SELECT 'ten_other_' || i, 'Other ' || i, 1000 FROM generate_series(1, ?) AS i`,
    [n],
  );
  await knex.raw(
    `INSERT INTO receptionists (id, tenant_id, name, status, phone_number)
     SELECT 'rcp_other_' || i, 'ten_other_' || i, 'Desk', 'ready', '+14155550100'
       FROM generate_series(1, ?) AS i`,
    [n],
  );
  for (const [table, extra] of [
    ['usage_periods', ''],
    ['usage_receptionist_periods', ", 'rcp_other_' || i"],
  ] as const) {
    const columns = table === 'usage_periods' ? '' : ', receptionist_id';
    await knex.raw(
      `INSERT INTO ${table} (tenant_id, period_start${columns}, minutes_used, calls_completed)
       SELECT 'ten_other_' || i, ?::date${extra}, i % 900, i % 300 FROM generate_series(1, ?) AS i`,
      [monthStart.toISOString().slice(0, 10), n],
    );
  }
}

async function load(benchUrl: string, spec: UsageSeedSpec, knex: Knex): Promise<UsageSeed> {
  const now = new Date();
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const period = monthStart.toISOString().slice(0, 7);
  const big = await tenantWithReceptionists(knex, 'Usage bench (big)', spec.receptionists);
  const small = await tenantWithReceptionists(knex, 'Usage bench (small)', spec.receptionists);
  await withClient(benchUrl, async (c) => {
    await c.query('SET synchronous_commit = off');
    for (const [label, t, n] of [
      ['big', big, spec.bigCalls],
      ['small', small, spec.smallCalls],
    ] as const) {
      const bar = progressBar(`COPY calls (${label} tenant)`.padEnd(36), n, 'calls');
      await pipeline(
        Readable.from(callLines(t.tenantId, t.receptionists, n, monthStart, (d) => bar.update(d))),
        c.query(copyFrom(`COPY calls (${COLUMNS.join(', ')}) FROM STDIN`)),
      );
      bar.stop();
    }
  });
  await step('counting them (migration 008 aggregation)', () => aggregateCountedCalls(knex));
  await step(`${spec.otherTenants} other tenants with usage`, () =>
    otherTenants(knex, spec.otherTenants, monthStart),
  );
  await step('VACUUM ANALYZE', () => knex.raw('VACUUM ANALYZE'));
  await knex.schema.createTable(MARKER, (t) => {
    t.text('spec').primary();
    t.jsonb('seed').notNullable();
  });
  const seed = {
    period,
    big: { tenantId: big.tenantId, apiKey: big.apiKey },
    small: { tenantId: small.tenantId, apiKey: small.apiKey },
  };
  await knex(MARKER).insert({ spec: JSON.stringify(spec), seed: JSON.stringify(seed) });
  return { ...seed, benchUrl, dbName: '', skipped: false };
}

/** The seed `spec` describes, reused when the marker and the call count match. */
export async function ensureUsageSeed(spec: UsageSeedSpec, force: boolean): Promise<UsageSeed> {
  const { adminUrl, benchUrl, dbName } = databaseUrls();
  const expectedCalls = spec.bigCalls + spec.smallCalls;
  const exists = await withClient(adminUrl, async (c) => {
    const r = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
    return r.rowCount === 1;
  });
  if (exists && !force) {
    const knex = createKnex(benchUrl, { poolMax: 2 });
    try {
      await migrateLatest(knex);
      const marker = (await knex.raw('SELECT to_regclass(?) AS t', [MARKER])) as {
        rows: { t: string | null }[];
      };
      if (marker.rows[0]?.t) {
        const row = (await knex(MARKER)
          .where({ spec: JSON.stringify(spec) })
          .first()) as { seed: Omit<UsageSeed, 'benchUrl' | 'dbName' | 'skipped'> } | undefined;
        const [{ n }] = (await knex('calls').count({ n: '*' })) as [{ n: string }];
        if (row && Number(n) >= expectedCalls) {
          log(`  ${dbName} already holds this seed: skipping the load`);
          return { ...row.seed, benchUrl, dbName, skipped: true };
        }
      }
    } finally {
      await knex.destroy();
    }
  }
  log(`  (re)creating ${dbName}`);
  await withClient(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${dbName}"`);
  });
  const knex = createKnex(benchUrl, { poolMax: 2 });
  try {
    await migrateLatest(knex);
    return { ...(await load(benchUrl, spec, knex)), dbName };
  } finally {
    await knex.destroy();
  }
}
