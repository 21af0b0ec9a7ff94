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
} from '@switchboard/db';
import { CallRowGenerator, COPY_COLUMNS } from '../calls/rows';
import { localDatabase, withClient } from '../lib/database';
import { LIFTED_KEY_LIMIT } from '../lib/env';

export interface CompareSetup {
  benchUrl: string;
  dbName: string;
  tenantId: string;
  apiKey: string;
  receptionistId: string;
}

const DAY_MS = 86_400_000;

/**
 * A fresh database (dropped and recreated on every run): migrated, one tenant whose per-key
 * limit is lifted, a write key (write includes read), a ready receptionist and `calls`
 * history calls loaded by COPY, so GET /calls has full pages to list.
 */
export async function setupCompareDatabase(calls: number): Promise<CompareSetup> {
  const dbName = process.env.BENCH_COMPARE_DATABASE_NAME ?? 'switchboard_bench_compare';
  const { adminUrl, url } = localDatabase(dbName, 'BENCH_COMPARE_DATABASE_NAME');
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${dbName}"`);
  } finally {
    await admin.end();
  }
  const knex = createKnex(url, { poolMax: 2 });
  try {
    await migrateLatest(knex);
    const tenants = new TenantsStore(knex);
    const tenant = await tenants.create({ name: 'Compare Bench' });
    await tenants.setRateLimit(tenant.id, LIFTED_KEY_LIMIT);
    const { key } = await new ApiKeysStore(knex).create({
      tenantId: tenant.id,
      scopes: ['write'],
      name: 'comparison benchmark',
    });
    const phone = '+14155550100';
    const receptionist = await new ReceptionistsStore(knex).create({
      tenantId: tenant.id,
      name: 'Front Desk',
      status: 'ready',
      phoneNumber: phone,
      provisionedAt: new Date(),
    });
    const gen = new CallRowGenerator(
      [{ id: tenant.id, calls, receptionists: [{ id: receptionist.id, phone }] }],
      { seed: 20261126, startMs: Date.now() - 32 * DAY_MS, spanMs: 30 * DAY_MS },
    );
    function* lines(): Generator<string> {
      for (let line = gen.next(); line !== null; line = gen.next()) yield line;
    }
    await withClient(url, async (c) => {
      await pipeline(
        Readable.from(lines(), { objectMode: false }),
        c.query(copyFrom(`COPY calls (${COPY_COLUMNS.join(', ')}) FROM STDIN`)),
      );
      await c.query('VACUUM ANALYZE calls');
    });
    return {
      benchUrl: url,
      dbName,
      tenantId: tenant.id,
      apiKey: key,
      receptionistId: receptionist.id,
    };
  } finally {
    await knex.destroy();
  }
}
