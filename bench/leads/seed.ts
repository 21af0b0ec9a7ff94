import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { ApiKeysStore, createKnex, migrateLatest, TenantsStore, type Knex } from '@switchboard/db';
import { log, progressBar, seconds, step } from '../lib/progress';
import { leadRow, prng } from './rows';
import { localDatabase, withClient } from '../lib/database';

/** What the database must hold; stored as the marker, so a changed spec means a reseed. */
export interface LeadSeedSpec {
  version: number;
  big: number;
  small: number;
  prngSeed: number;
}

export interface LeadSeed {
  skipped: boolean;
  bigTenantId: string;
  smallTenantId: string;
  apiKey: string;
  sizes: Record<string, string>;
}

const MARKER = 'bench_leads_seed';
const YEAR_MS = 365 * 86_400_000;

/** A database of the local server (127.0.0.1 only) by name. */
export function benchDatabase(name: string): { adminUrl: string; url: string } {
  return localDatabase(name);
}

/** Drops (when asked) and creates a database, then migrates it. */
export async function freshDatabase(name: string, drop: boolean): Promise<string> {
  const { adminUrl, url } = benchDatabase(name);
  await withClient(adminUrl, async (c) => {
    const exists = (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount;
    if (exists && drop) await c.query(`DROP DATABASE "${name}" WITH (FORCE)`);
    if (!exists || drop) await c.query(`CREATE DATABASE "${name}"`);
  });
  const knex = createKnex(url, { poolMax: 1 });
  try {
    await migrateLatest(knex);
  } finally {
    await knex.destroy();
  }
  return url;
}

/** COPY one tenant's leads, created over the last year in row order, with a progress bar. */
async function copyLeads(
  url: string,
  tenantId: string,
  count: number,
  phoneBase: number,
  seed: number,
) {
  const rand = prng(seed);
  const start = Date.now() - YEAR_MS;
  const bar = progressBar(`COPY ${count.toLocaleString('en-US')} leads`.padEnd(28), count, 'rows');
  let i = 0;
  function* lines(): Generator<string> {
    while (i < count) {
      let chunk = '';
      for (let k = 0; k < 2000 && i < count; k++, i++) {
        const r = leadRow(i, phoneBase, rand);
        const at = new Date(start + Math.floor((i / count) * YEAR_MS)).toISOString();
        chunk += `lead_${tenantId.slice(4, 12)}${String(i).padStart(24, '0')}\t${tenantId}\t${r.name}\t${r.phone}\t${r.email}\tapi\t${r.status}\t{${r.tags.join(',')}}\t${at}\t${at}\n`;
      }
      bar.update(i);
      yield chunk;
    }
  }
  await withClient(url, async (c) => {
    const copy = c.query(
      copyFrom(
        'COPY leads (id, tenant_id, name, phone, email, source, status, tags, created_at, updated_at) FROM STDIN',
      ),
    );
    await pipeline(Readable.from(lines()), copy);
  });
  bar.stop();
}

async function validMarker(knex: Knex, spec: LeadSeedSpec) {
  const exists = (await knex.raw('SELECT to_regclass(?) AS t', [MARKER])) as {
    rows: { t: string | null }[];
  };
  if (!exists.rows[0]?.t) return null;
  const marker = (await knex(MARKER)
    .where({ spec: JSON.stringify(spec) })
    .first()) as { big_tenant_id: string; small_tenant_id: string; api_key: string } | undefined;
  if (!marker) return null;
  const n = (await knex('leads').count({ n: '*' }).first()) as { n: string };
  return Number(n.n) === spec.big + spec.small ? marker : null;
}

/**
 * Makes sure the database holds exactly the seed `spec` describes: a big tenant and a small
 * one, loaded by COPY with the secondary indexes dropped and rebuilt from their own
 * definitions, then VACUUM (FREEZE) and ANALYZE. Reused by later runs.
 */
export async function ensureLeadSeed(
  name: string,
  spec: LeadSeedSpec,
  force: boolean,
): Promise<LeadSeed> {
  const url = await freshDatabase(name, false);
  let knex = createKnex(url, { poolMax: 2 });
  try {
    const found = force ? null : await validMarker(knex, spec);
    if (found) {
      log(`  ${name} already holds this seed: skipping the load`);
      return {
        skipped: true,
        bigTenantId: found.big_tenant_id,
        smallTenantId: found.small_tenant_id,
        apiKey: found.api_key,
        sizes: await sizes(knex),
      };
    }
    await knex.destroy();
    await freshDatabase(name, true);
    knex = createKnex(url, { poolMax: 2 });
    const started = Date.now();
    const tenants = new TenantsStore(knex);
    const big = await tenants.create({ name: 'Leads bench (1M)' });
    const small = await tenants.create({ name: 'Leads bench (10k)' });
    const { key } = await new ApiKeysStore(knex).create({
      tenantId: big.id,
      scopes: ['read'],
      name: 'bench',
    });
    const { key: smallKey } = await new ApiKeysStore(knex).create({
      tenantId: small.id,
      scopes: ['read'],
      name: 'bench',
    });
    const indexes = (await knex.raw(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'leads' AND indexname <> 'leads_pkey'`,
    )) as { rows: { indexname: string; indexdef: string }[] };
    for (const ix of indexes.rows) await knex.raw(`DROP INDEX "${ix.indexname}"`);
    await copyLeads(url, big.id, spec.big, 2_000_000_000, spec.prngSeed);
    await copyLeads(url, small.id, spec.small, 3_000_000_000, spec.prngSeed + 1);
    for (const ix of indexes.rows) {
      await step(`index ${ix.indexname}`, () => knex.raw(ix.indexdef));
    }
    await step('VACUUM (FREEZE, ANALYZE) leads', () => knex.raw('VACUUM (FREEZE, ANALYZE) leads'));
    await knex.schema.createTable(MARKER, (t) => {
      t.text('spec').primary();
      t.text('big_tenant_id').notNullable();
      t.text('small_tenant_id').notNullable();
      t.text('api_key').notNullable();
      t.text('small_api_key').notNullable();
    });
    await knex(MARKER).insert({
      spec: JSON.stringify(spec),
      big_tenant_id: big.id,
      small_tenant_id: small.id,
      api_key: key,
      small_api_key: smallKey,
    });
    log(`  seed complete in ${seconds(started)}`);
    return {
      skipped: false,
      bigTenantId: big.id,
      smallTenantId: small.id,
      apiKey: key,
      sizes: await sizes(knex),
    };
  } finally {
    await knex.destroy();
  }
}

/** The small tenant's read key (kept in the marker). */
export async function smallTenantKey(name: string): Promise<string> {
  const { url } = benchDatabase(name);
  return withClient(url, async (c) => {
    const r = await c.query<{ small_api_key: string }>(
      `SELECT small_api_key FROM ${MARKER} LIMIT 1`,
    );
    return r.rows[0]?.small_api_key ?? '';
  });
}

async function sizes(knex: Knex): Promise<Record<string, string>> {
  const r = (await knex.raw(
    `SELECT c.relname AS name, pg_size_pretty(pg_total_relation_size(c.oid)) AS size
       FROM pg_class c
      WHERE c.relname = 'leads' OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'leads'::regclass)
      ORDER BY c.relname`,
  )) as { rows: { name: string; size: string }[] };
  return Object.fromEntries(r.rows.map((x) => [x.name, x.size]));
}

export const randomSecret = (): string => randomBytes(24).toString('hex');
