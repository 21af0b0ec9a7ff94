import { createKnex, migrateLatest } from '@switchboard/db';
import type { Redis } from '@switchboard/queues';
import { dropAndCreateDatabase, localDatabase } from '../lib/database';
import { createWriteTenant } from '../lib/tenant';

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
  await dropAndCreateDatabase(adminUrl, dbName);
  const knex = createKnex(benchUrl, { poolMax: 2 });
  try {
    await migrateLatest(knex);
    const { apiKey, receptionistId } = await createWriteTenant(
      knex,
      'Outbound Bench',
      'outbound benchmark',
    );
    return { benchUrl, dbName, apiKey, receptionistId };
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
