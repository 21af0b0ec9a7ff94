import { randomBytes } from 'node:crypto';
import {
  ApiKeysStore,
  createKnex,
  LeadsStore,
  migrateLatest,
  ReceptionistsStore,
  TenantsStore,
  type Knex,
} from '@switchboard/db';
import { startTsChild, waitForHttp, type Child } from '../lib/children';
import { freePort } from '../lib/http';
import { progressBar, step } from '../lib/progress';
import { recreateDatabase, smsDatabaseUrls } from '../sms/seed';

export interface CampaignBench {
  benchUrl: string;
  knex: Knex;
  base: string;
  key: string;
  receptionistId: string;
  phones: string[];
  api: Child;
  workers: Child[];
}

/** The recipients: distinct numbers (one in 10,000 ends in 0003: the carrier refuses it). */
export const benchPhone = (i: number): string => `+1415${String(2_000_000 + i)}`;

/**
 * A fresh database with one tenant, a write key, a ready receptionist and `leads` leads
 * (each with a name and a phone), then one API process and `workers` worker processes,
 * all production settings, on their own Redis prefix.
 */
export async function setupCampaignBench(opts: {
  database: string;
  redisUrl: string;
  prefix: string;
  leads: number;
  workers: number;
}): Promise<CampaignBench> {
  const { adminUrl, benchUrl } = smsDatabaseUrls(opts.database);
  await step(`recreating ${opts.database}`, () => recreateDatabase(adminUrl, opts.database, true));
  const knex = createKnex(benchUrl, { poolMax: 4 });
  await migrateLatest(knex);
  const tenant = await new TenantsStore(knex).create({ name: 'Campaign Bench' });
  const { key } = await new ApiKeysStore(knex).create({
    tenantId: tenant.id,
    scopes: ['write'],
    name: 'campaign benchmark',
  });
  const receptionist = await new ReceptionistsStore(knex).create({
    tenantId: tenant.id,
    name: 'Front Desk',
    status: 'ready',
    phoneNumber: '+14155550100',
    provisionedAt: new Date(),
  });
  const phones = Array.from({ length: opts.leads }, (_, i) => benchPhone(i));
  const bar = progressBar('leads'.padEnd(36), opts.leads, 'leads');
  const leads = new LeadsStore(knex);
  for (let i = 0; i < phones.length; i += 1000) {
    await leads.insertMany(
      knex,
      phones.slice(i, i + 1000).map((phone, j) => ({
        tenantId: tenant.id,
        source: 'api' as const,
        fields: { name: `Customer ${i + j}`, phone, tags: ['bench'] },
      })),
    );
    bar.update(Math.min(opts.leads, i + 1000));
  }
  bar.stop();
  await knex.raw('ANALYZE');

  const env = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: benchUrl,
    REDIS_URL: opts.redisUrl,
    QUEUE_PREFIX: opts.prefix,
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
    INGEST_TOKEN: randomBytes(24).toString('hex'),
    CURSOR_SECRET: randomBytes(24).toString('hex'),
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
  const port = await freePort();
  const api = startTsChild('api', 'apps/api/src/server.ts', { ...env, PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  // Workers log at info so that their 'worker ready' line can be awaited (they log nothing
  // per message at that level).
  const workers = Array.from({ length: opts.workers }, (_, i) =>
    startTsChild(`worker ${i + 1}`, 'apps/worker/src/main.ts', { ...env, LOG_LEVEL: 'info' }),
  );
  await step('starting the API and the workers', async () => {
    await waitForHttp(api, `${base}/healthz`);
    for (let i = 0; i < 600 && !workers.every((w) => w.tail().includes('worker ready')); i++) {
      const dead = workers.find((w) => w.proc.exitCode !== null);
      if (dead) throw new Error(`${dead.name} exited:\n${dead.tail()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!workers.every((w) => w.tail().includes('worker ready'))) {
      throw new Error('the workers were not ready within 60 s');
    }
  });
  return {
    benchUrl,
    knex,
    base,
    key,
    receptionistId: receptionist.id,
    phones,
    api,
    workers,
  };
}
