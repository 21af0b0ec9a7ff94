import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { databaseUrl, runId, SERVER_URL, templateName } from './env';

const admin = () => knexFactory({ client: 'pg', connection: SERVER_URL, pool: { min: 0, max: 1 } });

/**
 * Creates a fresh database cloned from the migrated template; returns its URL. It lives until
 * the global teardown drops every database of the run (test/support/global-teardown.ts).
 */
export async function createTestDatabase(): Promise<{ name: string; url: string }> {
  const name = `sbt_${runId()}_${randomBytes(4).toString('hex')}`;
  const db = admin();
  try {
    // Two clones of one template at the same instant can collide; retry briefly.
    for (let attempt = 1; ; attempt++) {
      try {
        await db.raw('CREATE DATABASE ?? TEMPLATE ??', [name, templateName()]);
        break;
      } catch (err) {
        if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message))
          throw err;
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  } finally {
    await db.destroy();
  }
  return { name, url: databaseUrl(name) };
}
