import { Client } from 'pg';
import {
  ApiKeysStore,
  createKnex,
  migrateLatest,
  ReceptionistsStore,
  TenantsStore,
} from '@switchboard/db';
import type { Redis } from '@switchboard/queues';
import { localDatabase } from '../lib/database';
import { LIFTED_KEY_LIMIT } from '../lib/env';

export interface OutboundSetup {
  benchUrl: string;
  dbName: string;
  apiKey: string;
  receptionistId: string;
}

/** The bench database's URL: the admin URL with another database name (local Postgres only). */
export function benchDatabase(): { adminUrl: string; benchUrl: string; dbName: string } {
  const dbName = process.env.BENCH_OUTBOUND_DATABASE_NAME ?? 'switchboard_bench_outbound';
  const { adminUrl, url } = localDatabase(dbName, 'BENCH_OUTBOUND_DATABASE_NAME');
  return { adminUrl, benchUrl: url, dbName };
}

/**
 * A fresh bench database (dropped and recreated on every run, so each run inserts into the
 * same empty table), migrated, with one tenant, a write key and a ready receptionist.
 */
export async function setupDatabase(): Promise<OutboundSetup> {
  const { adminUrl, benchUrl, dbName } = benchDatabase();
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${dbName}"`);
  } finally {
    await admin.end();
  }
  const knex = createKnex(benchUrl, { poolMax: 2 });
  try {
    await migrateLatest(knex);
    const tenants = new TenantsStore(knex);
    const tenant = await tenants.create({ name: 'Outbound Bench' });
    // The measured key's limit is lifted: the run measures the limiter, never its 429s.
    await tenants.setRateLimit(tenant.id, LIFTED_KEY_LIMIT);
    const { key } = await new ApiKeysStore(knex).create({
      tenantId: tenant.id,
      scopes: ['write'],
      name: 'outbound benchmark',
    });
    const receptionist = await new ReceptionistsStore(knex).create({
      tenantId: tenant.id,
      name: 'Front Desk',
      status: 'ready',
      phoneNumber: '+14155550100',
      provisionedAt: new Date(),
    });
    return { benchUrl, dbName, apiKey: key, receptionistId: receptionist.id };
  } finally {
    await knex.destroy();
  }
}

/** Deletes every Redis key under `prefix` (queued dial jobs, idempotency entries). */
export async function deleteRedisPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) deleted += await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  return deleted;
}
