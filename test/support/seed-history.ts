import type { Knex } from 'knex';

/**
 * History rows written straight into the tables, generic enough to run against the schema
 * before partitioning (migration 012) and after: `n` events with a delivery each and two
 * attempts per delivery, `n` calls spread over `months` months, `n` SMS and `n` telephony
 * messages, dated from `months` months ago up to now. For migration tests and benchmarks.
 */
export async function seedHistory(knex: Knex, n: number, months: number): Promise<void> {
  await knex.raw(
    `INSERT INTO tenants (id, name) VALUES ('ten_h', 'History') ON CONFLICT DO NOTHING;
     INSERT INTO receptionists (id, tenant_id, name, status, phone_number)
       VALUES ('rcp_h', 'ten_h', 'Desk', 'ready', '+14155550100') ON CONFLICT DO NOTHING;
     INSERT INTO webhook_subscriptions (id, tenant_id, url, secret_ciphertext, secret_key_id)
       VALUES ('00000000-0000-4000-8000-000000000001', 'ten_h', 'https://127.0.0.1/hook', 'x', 'k')
       ON CONFLICT DO NOTHING`,
  );
  const at = `now() - make_interval(secs => (extract(epoch FROM interval '${months} months') * i / ${n}))`;
  await knex.raw(
    `INSERT INTO events (id, tenant_id, type, data, created_at, fanned_out_at)
       SELECT 'evt_h' || i, 'ten_h', 'call.completed', jsonb_build_object('i', i), ${at}, ${at}
         FROM generate_series(1, ${n}) i;
     INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, status, attempts,
                                     created_at, updated_at)
       SELECT 'dlv_h' || i, 'ten_h', 'evt_h' || i, '00000000-0000-4000-8000-000000000001',
              CASE WHEN i % 10 = 0 THEN 'pending' ELSE 'succeeded' END, 2, ${at}, ${at}
         FROM generate_series(1, ${n}) i;
     INSERT INTO webhook_delivery_attempts (delivery_id, round, attempt, status_code,
                                            duration_ms, attempted_at)
       SELECT 'dlv_h' || i, 1, a, CASE WHEN a = 1 THEN 500 ELSE 200 END, 30, ${at}
         FROM generate_series(1, ${n}) i, generate_series(1, 2) a;
     INSERT INTO calls (id, tenant_id, receptionist_id, provider_call_id, direction, status,
                        from_number, to_number, started_at, idempotency_key)
       SELECT 'call_h' || i, 'ten_h', 'rcp_h', 'pc_h' || i, 'inbound', 'completed',
              '+14155550101', '+14155550100', ${at},
              CASE WHEN i % 7 = 0 THEN 'key-' || i END
         FROM generate_series(1, ${n}) i;
     INSERT INTO sms_messages (id, tenant_id, receptionist_id, direction, status, from_number,
                               to_number, message, segments, provider_message_id, created_at)
       SELECT 'sms_h' || i, 'ten_h', 'rcp_h', 'inbound', 'received', '+14155550101',
              '+14155550100', 'hello ' || i, 1, 'pm_h' || i, ${at}
         FROM generate_series(1, ${n}) i;
     INSERT INTO telephony_messages (id, type, call_id, received_at)
       SELECT 'tm_h' || i, 'call.ended', 'call_h' || i, ${at} FROM generate_series(1, ${n}) i`,
  );
}

export const HISTORY_TABLES = [
  'events',
  'webhook_deliveries',
  'webhook_delivery_attempts',
  'telephony_messages',
  'calls',
  'sms_messages',
] as const;

/** Row count and a digest of every row's full text, per table: equal iff no row changed. */
export type TableDigests = Record<string, { rows: number; md5: string; columns: string[] }>;

/**
 * Row count and a digest of every history table's rows. Given `like` (an earlier digest), only
 * the columns that existed then are digested: columns that later migrations add do not count
 * as a change of the rows that were there.
 */
export async function digestTables(knex: Knex, like?: TableDigests): Promise<TableDigests> {
  const out: TableDigests = {};
  for (const table of HISTORY_TABLES) {
    const columns =
      like?.[table]?.columns ??
      ((
        await knex.raw(
          `SELECT attname FROM pg_attribute
            WHERE attrelid = ?::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
          [table],
        )
      ).rows.map((r: { attname: string }) => r.attname) as string[]);
    const row = `ROW(${columns.map(() => '??').join(', ')})::text`;
    const { rows } = (await knex.raw(
      `SELECT count(*)::int AS rows, md5(coalesce(string_agg(${row}, '|' ORDER BY t.id), '')) AS md5
         FROM ?? t`,
      [...columns, table],
    )) as { rows: { rows: number; md5: string }[] };
    out[table] = { ...(rows[0] ?? { rows: 0, md5: '' }), columns };
  }
  return out;
}
