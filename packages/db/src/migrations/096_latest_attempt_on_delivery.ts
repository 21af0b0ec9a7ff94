import type { Knex } from 'knex';

/**
 * A delivery's latest logged attempt lives on its row
 * (docs/decisions/0077-latest-attempt-on-the-delivery-row.md): an attempt gets a row of its own in
 * `webhook_delivery_attempts` only once a later attempt of the delivery supersedes it
 * (delivery-lifecycle-sql.ts). The delivery's
 * `attempts`, `last_status_code` and `last_error` describe its last attempt, logged or not
 * (an attempt recorded without an attempt row changes them), and its round's count starts
 * over at a new round, so the latest logged attempt keeps every field of an attempt row in
 * columns of its own. Nullable without a default: adding them changes only the catalog, on
 * the partitioned table and every partition, whatever their size.
 *
 * `webhook_delivery_attempts_all` lists every attempt: the rows and each delivery's latest.
 * `partition_at` is the partition key of the row that holds the attempt (the attempt row's
 * `attempted_at`, the delivery's `created_at`); it is never later than `attempted_at`, so a
 * reader bounding attempts from below by a delivery's creation (or anything earlier) can
 * bound it too, which prunes the partitions of both tables.
 */
const COLUMNS: ReadonlyArray<readonly [string, string]> = [
  ['latest_round', 'integer'],
  ['latest_attempt', 'integer'],
  ['latest_status_code', 'integer'],
  ['latest_error', 'text'],
  ['latest_duration_ms', 'integer'],
  ['latest_response_excerpt', 'text'],
  ['latest_attempted_at', 'timestamptz(3)'],
  ['latest_request_headers', 'jsonb'],
  ['latest_response_headers', 'jsonb'],
];

export const VIEW_SQL = `CREATE OR REPLACE VIEW webhook_delivery_attempts_all AS
  SELECT a.id, a.delivery_id, a.round, a.attempt, a.status_code, a.error, a.duration_ms,
         a.response_excerpt, a.attempted_at, a.request_headers, a.response_headers,
         a.attempted_at AS partition_at
    FROM webhook_delivery_attempts a
  UNION ALL
  SELECT NULL::bigint, d.id, d.latest_round, d.latest_attempt, d.latest_status_code,
         d.latest_error, d.latest_duration_ms, d.latest_response_excerpt,
         d.latest_attempted_at, d.latest_request_headers, d.latest_response_headers,
         d.created_at
    FROM webhook_deliveries d
   WHERE d.latest_attempt IS NOT NULL`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `ALTER TABLE webhook_deliveries ${COLUMNS.map(([c, t]) => `ADD COLUMN IF NOT EXISTS ${c} ${t}`).join(', ')}`,
  );
  await knex.raw(VIEW_SQL);
}

/** Every latest attempt becomes a row first: nothing listed is lost. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `INSERT INTO webhook_delivery_attempts
            (delivery_id, round, attempt, status_code, error, duration_ms, response_excerpt,
             attempted_at, request_headers, response_headers)
     SELECT id, latest_round, latest_attempt, latest_status_code, latest_error,
            latest_duration_ms, latest_response_excerpt, latest_attempted_at,
            latest_request_headers, latest_response_headers
       FROM webhook_deliveries WHERE latest_attempt IS NOT NULL`,
  );
  await knex.raw('DROP VIEW IF EXISTS webhook_delivery_attempts_all');
  await knex.raw(
    `ALTER TABLE webhook_deliveries ${COLUMNS.map(([c]) => `DROP COLUMN IF EXISTS ${c}`).join(', ')}`,
  );
}
