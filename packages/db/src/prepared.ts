import type { Knex } from 'knex';

interface PgConnection {
  query(
    q: { name: string; text: string; values: unknown[] },
    callback: (err: Error | null, result: { rows: unknown[] }) => void,
  ): void;
}
interface KnexClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<void>;
}

/**
 * Runs a named prepared statement on a pooled connection: Postgres parses and plans it once
 * per connection instead of on every call. For the statements run once per request or per
 * delivery; `name` must be unique per statement text.
 *
 * The statement is sent with a callback, as knex itself does. node-postgres's promise form
 * (`query()` without one) kept each result alive across young-generation collections: an
 * API process promoted about 20 KB per request to the old generation with it, and its
 * scavenges took several times the CPU (docs/decisions/0107-api-hot-path.md).
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
    return await new Promise<Row[]>((resolve, reject) => {
      connection.query({ name, text, values }, (err, result) =>
        err ? reject(err) : resolve(result.rows as Row[]),
      );
    });
  } finally {
    await client.releaseConnection(connection);
  }
}
