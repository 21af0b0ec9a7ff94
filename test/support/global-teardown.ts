import knexFactory from 'knex';
import { runId, SERVER_URL } from './env';

/** Drops the template and any database a crashed test file left behind. */
export default async function globalTeardown(): Promise<void> {
  const admin = knexFactory({ client: 'pg', connection: SERVER_URL, pool: { min: 0, max: 1 } });
  try {
    const { rows } = await admin.raw<{ rows: Array<{ datname: string }> }>(
      'SELECT datname FROM pg_database WHERE datname LIKE ?',
      [`sbt_${runId()}_%`],
    );
    for (const { datname } of rows) {
      await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [datname]);
    }
  } finally {
    await admin.destroy();
  }
}
