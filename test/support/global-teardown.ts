import knexFactory from 'knex';
import { runId, SERVER_URL } from './env';
import { removeSdkTarball } from './sdk-tarball';

/**
 * Drops every database of the run: the template and each test file's clone. A test file does
 * not drop its own: DROP DATABASE waits for a checkpoint (about a second on a busy machine,
 * which each file would pay), while drops that run together share one.
 */
const AT_ONCE = 8;

export default async function globalTeardown(): Promise<void> {
  removeSdkTarball();
  const admin = knexFactory({
    client: 'pg',
    connection: SERVER_URL,
    pool: { min: 0, max: AT_ONCE },
  });
  try {
    const { rows } = await admin.raw<{ rows: Array<{ datname: string }> }>(
      'SELECT datname FROM pg_database WHERE datname LIKE ?',
      [`sbt_${runId()}_%`],
    );
    const names = rows.map((r) => r.datname);
    const next = async (): Promise<void> => {
      for (let name = names.pop(); name !== undefined; name = names.pop()) {
        await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
      }
    };
    await Promise.all(Array.from({ length: AT_ONCE }, next));
  } finally {
    await admin.destroy();
  }
}
