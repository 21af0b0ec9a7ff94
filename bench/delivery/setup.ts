import { Client } from 'pg';
import { secretBoxForKey } from '@switchboard/crypto';
import {
  createKnex,
  ensureAhead,
  migrateLatest,
  PARTITIONED_TABLES,
  newWebhookSubscriptionId,
  ReceptionistsStore,
  TenantsStore,
  webhookSecretContext,
  WebhookSubscriptionsStore,
  type Knex,
} from '@switchboard/db';
import type { Redis } from '@switchboard/queues';
import { generateSigningSecret } from '@switchboard/webhooks';

const NAME_OK = /^[a-z0-9_]+$/;

/** The bench database: the admin URL with another database name (local Postgres only). */
export function benchDatabase(): { adminUrl: string; benchUrl: string; dbName: string } {
  const adminUrl =
    process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = process.env.BENCH_DELIVERY_DATABASE_NAME ?? 'switchboard_bench_delivery';
  const u = new URL(adminUrl);
  if (u.hostname !== '127.0.0.1') {
    throw new Error(`the benchmark only talks to Postgres on 127.0.0.1, not ${u.hostname}`);
  }
  if (!NAME_OK.test(dbName)) throw new Error(`bad BENCH_DELIVERY_DATABASE_NAME ${dbName}`);
  u.pathname = `/${dbName}`;
  return { adminUrl, benchUrl: u.toString(), dbName };
}

async function admin<T>(adminUrl: string, run: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    return await run(c);
  } finally {
    await c.end();
  }
}

/**
 * Drops and recreates the bench database, then applies every migration. `partitionDays` more
 * daily partitions of each daily table than a new database has: a service that has run for
 * that long keeps that many days of history (DELIVERY_RETENTION_DAYS, 30 by default), and a
 * generic plan names every partition. They are made ahead of the clock (the archive
 * partition holds the past of a new database); to a plan they count the same.
 */
export async function recreateDatabase(
  partitionDays = 0,
): Promise<{ benchUrl: string; dbName: string }> {
  const { adminUrl, benchUrl, dbName } = benchDatabase();
  await admin(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${dbName}"`);
  });
  const knex = createKnex(benchUrl, { poolMax: 1 });
  try {
    await migrateLatest(knex);
    // Each call makes the days up to AHEAD past its clock that are missing: one more each.
    for (const t of PARTITIONED_TABLES.filter((p) => p.interval === 'day')) {
      for (let day = 1; day <= partitionDays; day++) {
        await ensureAhead(knex, t, new Date(Date.now() + day * 86_400_000), 10_000);
      }
    }
  } finally {
    await knex.destroy();
  }
  return { benchUrl, dbName };
}

export async function dropDatabase(): Promise<void> {
  const { adminUrl, dbName } = benchDatabase();
  await admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
}

export interface BenchTenant {
  tenantId: string;
  receptionistId: string;
  subscriptionIds: string[];
}

/**
 * A tenant with one receptionist (no legacy webhook_url) and `subscriptions` active
 * subscriptions to every event type, the i-th POSTing to `urlFor(i)`. Secrets are sealed
 * exactly as `POST /api/v1/webhooks` seals them, with the worker's key.
 */
export async function createTenant(
  knex: Knex,
  encryptionKey: Buffer,
  name: string,
  subscriptions: number,
  urlFor: (i: number) => string,
): Promise<BenchTenant> {
  const box = secretBoxForKey(encryptionKey);
  const tenant = await new TenantsStore(knex).create({ name });
  const receptionist = await new ReceptionistsStore(knex).create({
    tenantId: tenant.id,
    name: `${name} desk`,
    status: 'ready',
    phoneNumber: '+14155550100',
    provisionedAt: new Date(),
  });
  const store = new WebhookSubscriptionsStore(knex);
  const subscriptionIds: string[] = [];
  for (let i = 0; i < subscriptions; i++) {
    const id = newWebhookSubscriptionId();
    await store.create({
      id,
      tenantId: tenant.id,
      url: urlFor(i),
      events: [],
      description: `${name} #${i}`,
      secret: {
        ciphertext: box.encrypt(generateSigningSecret(), webhookSecretContext(tenant.id, id)),
        keyId: box.activeKeyId,
      },
    });
    subscriptionIds.push(id);
  }
  return { tenantId: tenant.id, receptionistId: receptionist.id, subscriptionIds };
}

/** Deletes every Redis key matching `pattern` (SCAN + UNLINK, bounded by the key count). */
export async function deleteRedisKeys(redis: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length) deleted += await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  return deleted;
}
