import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { createKnex, migrateLatest } from '@switchboard/db';
import { CallRowGenerator, COPY_COLUMNS } from '../calls/rows';
import { dropAndCreateDatabase, localDatabase, withClient } from '../lib/database';
import { createWriteTenant } from '../lib/tenant';

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
  await dropAndCreateDatabase(adminUrl, dbName);
  const knex = createKnex(url, { poolMax: 2 });
  try {
    await migrateLatest(knex);
    const { tenantId, apiKey, receptionistId, phone } = await createWriteTenant(
      knex,
      'Compare Bench',
      'comparison benchmark',
    );
    const gen = new CallRowGenerator(
      [{ id: tenantId, calls, receptionists: [{ id: receptionistId, phone }] }],
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
    return { benchUrl: url, dbName, tenantId, apiKey, receptionistId };
  } finally {
    await knex.destroy();
  }
}
