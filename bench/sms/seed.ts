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
import { prng } from '../calls/rows';
import { log, progressBar, seconds, step } from '../lib/progress';
import { COPY_COLUMNS, messageRows, SPAN_MS } from './rows';
import { localDatabase } from '../lib/database';

/** What the history database must hold; stored as the marker, so a changed spec reseeds. */
export interface SmsSeedSpec {
  version: number;
  /** Messages of the measured receptionist (depth 1M needs a page beyond it). */
  bigReceptionist: number;
  /** Messages of each of the tenant's other receptionists (they share the table). */
  otherReceptionists: number;
  others: number;
  prngSeed: number;
}

export interface SmsSeed {
  benchUrl: string;
  skipped: boolean;
  tenantId: string;
  receptionistId: string;
  readKey: string;
}

const MARKER = 'bench_sms_seed';
/**
 * Rows per COPY, each its own transaction: about half are inbound and hold one advisory lock
 * each until the commit, well inside a stock server's shared lock table (64 × connections).
 */
const COPY_BATCH = 1000;
/** The bench database's URL: the admin URL with another database name (127.0.0.1 only). */
export function smsDatabaseUrls(name: string): { adminUrl: string; benchUrl: string } {
  const { adminUrl, url } = localDatabase(name);
  return { adminUrl, benchUrl: url };
}

/** Drops (when asked) and creates a database on the local server. */
export async function recreateDatabase(adminUrl: string, name: string, drop: boolean) {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount && !drop) return;
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
}

async function validMarker(knex: Knex, spec: SmsSeedSpec) {
  const exists = (await knex.raw('SELECT to_regclass(?) AS t', [MARKER])) as {
    rows: { t: string | null }[];
  };
  if (!exists.rows[0]?.t) return undefined;
  const marker = (await knex(MARKER)
    .where({ spec: JSON.stringify(spec) })
    .first()) as
    { tenant_id: string; receptionist_id: string; read_key: string; total: number } | undefined;
  if (!marker) return undefined;
  const [{ n }] = (await knex('sms_messages').count({ n: '*' })) as [{ n: string }];
  return Number(n) === marker.total ? marker : undefined;
}

/**
 * Makes sure the history database holds exactly the seed `spec` describes: reuses it when the
 * marker and the count match, else recreates it: a tenant with one receptionist of
 * `bigReceptionist` messages and `others` receptionists of `otherReceptionists`, by COPY.
 */
export async function ensureSmsSeed(
  name: string,
  spec: SmsSeedSpec,
  force: boolean,
): Promise<SmsSeed> {
  const { adminUrl, benchUrl } = smsDatabaseUrls(name);
  await recreateDatabase(adminUrl, name, false);
  let knex = createKnex(benchUrl, { poolMax: 2 });
  try {
    await migrateLatest(knex);
    const found = force ? undefined : await validMarker(knex, spec);
    if (found) {
      log(`  ${name} already holds this seed: skipping the load`);
      return {
        benchUrl,
        skipped: true,
        tenantId: found.tenant_id,
        receptionistId: found.receptionist_id,
        readKey: found.read_key,
      };
    }
    await knex.destroy();
    await recreateDatabase(adminUrl, name, true);
    knex = createKnex(benchUrl, { poolMax: 2 });
    await migrateLatest(knex);
    const started = Date.now();
    const tenant = await new TenantsStore(knex).create({ name: 'SMS History Bench' });
    const receptionists: Array<{ tenantId: string; id: string; phone: string }> = [];
    for (let i = 0; i <= spec.others; i++) {
      const phone = `+1212555${String(100 + i).padStart(4, '0')}`;
      const r = await new ReceptionistsStore(knex).create({
        tenantId: tenant.id,
        name: i === 0 ? 'Front Desk (measured)' : `Line ${i}`,
        status: 'ready',
        phoneNumber: phone,
        provisionedAt: new Date(),
      });
      receptionists.push({ tenantId: tenant.id, id: r.id, phone });
    }
    const total = spec.bigReceptionist + spec.others * spec.otherReceptionists;
    const rand = prng(spec.prngSeed);
    const startMs = Date.now() - SPAN_MS - 86_400_000;
    const bar = progressBar('COPY sms_messages'.padEnd(36), total, 'messages');
    let done = 0;
    function* batches(): Generator<string> {
      let buf: string[] = [];
      for (const [i, r] of receptionists.entries()) {
        const count = i === 0 ? spec.bigReceptionist : spec.otherReceptionists;
        for (const line of messageRows(rand, r, count, startMs)) {
          buf.push(line);
          if (buf.length === COPY_BATCH) {
            yield buf.join('');
            bar.update((done += buf.length));
            buf = [];
          }
        }
      }
      if (buf.length) yield buf.join('');
      bar.update((done += buf.length));
    }
    const client = new Client({ connectionString: benchUrl });
    await client.connect();
    try {
      await client.query('SET synchronous_commit = off');
      // One COPY (one transaction) per batch: the table's cross-partition uniqueness trigger
      // (migration 020's, packages/db/src/migrations/frozen/020_partitioning/uniqueness.ts)
      // takes an advisory lock per inbound row, held to the end of the transaction, and one
      // COPY of the whole seed exhausts the server's lock table ("out of shared memory",
      // max_locks_per_transaction).
      for (const batch of batches()) {
        await pipeline(
          Readable.from([batch], { objectMode: false }),
          client.query(copyFrom(`COPY sms_messages (${COPY_COLUMNS.join(', ')}) FROM STDIN`)),
        );
      }
      bar.stop();
      await step('VACUUM (FREEZE, ANALYZE) sms_messages', () =>
        client.query('VACUUM (FREEZE, ANALYZE) sms_messages'),
      );
    } finally {
      await client.end();
    }
    const { key } = await new ApiKeysStore(knex).create({
      tenantId: tenant.id,
      scopes: ['read'],
      name: 'sms history benchmark',
    });
    const first = receptionists[0] as { id: string };
    await knex.schema.createTable(MARKER, (t) => {
      t.text('spec').primary();
      t.text('tenant_id').notNullable();
      t.text('receptionist_id').notNullable();
      t.text('read_key').notNullable();
      t.integer('total').notNullable();
    });
    await knex(MARKER).insert({
      spec: JSON.stringify(spec),
      tenant_id: tenant.id,
      receptionist_id: first.id,
      read_key: key,
      total,
    });
    log(`  seeded ${total.toLocaleString('en-US')} messages in ${seconds(started)}`);
    return {
      benchUrl,
      skipped: false,
      tenantId: tenant.id,
      receptionistId: first.id,
      readKey: key,
    };
  } finally {
    await knex.destroy();
  }
}
