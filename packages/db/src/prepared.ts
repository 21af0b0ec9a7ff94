import type { Knex } from 'knex';

interface PgConnection {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}
interface KnexClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<void>;
}

/**
 * Runs a named prepared statement on a pooled connection: Postgres parses and plans it once
 * per connection instead of on every call. For the few statements run once per delivery;
 * `name` must be unique per statement text.
 */
export async function runPrepared<Row>(
  db: Knex,
  name: string,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  const client = (db as unknown as { client: KnexClient }).client;
  const connection = await client.acquireConnection();
  try {
    return (await connection.query({ name, text, values })).rows as Row[];
  } finally {
    await client.releaseConnection(connection);
  }
}
