import { Client } from 'pg';

const NAME_OK = /^[a-z0-9_]+$/;

/**
 * A database of the local Postgres by name: `BENCH_ADMIN_DATABASE_URL` (default the local
 * server's `postgres` database) with another database name. Benchmarks only ever talk to
 * 127.0.0.1 / localhost, and only to names of lower-case letters, digits and underscores
 * (they are spliced into CREATE/DROP DATABASE). `setting` names the variable the name came
 * from, for the error.
 */
export function localDatabase(
  name: string,
  setting = 'database name',
): { adminUrl: string; url: string } {
  const adminUrl =
    process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const u = new URL(adminUrl);
  if (!['127.0.0.1', 'localhost'].includes(u.hostname)) {
    throw new Error(`the benchmark only talks to a local Postgres, not ${u.hostname}`);
  }
  if (!NAME_OK.test(name)) throw new Error(`bad ${setting} ${name}`);
  u.pathname = `/${name}`;
  return { adminUrl, url: u.toString() };
}

/** Runs `run` on a connection of its own to `url`, closed afterwards whatever happens. */
export async function withClient<T>(url: string, run: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Drops the database `name` (closing its connections) and creates it empty, via `adminUrl`. */
export async function dropAndCreateDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  });
}
