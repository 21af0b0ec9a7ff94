import type { Knex } from 'knex';

/**
 * Retention row by row, where tenants share a partition: bounded batches (`batch` rows,
 * at most `maxBatches` per statement per run; the next run goes on), each its own short
 * transaction, so no lock is held for long and the live tables keep their throughput.
 */
export interface RowRetentionLimits {
  batch: number;
  maxBatches: number;
}

/** Runs `sql` (returning a `n` count of rows touched) until it touches fewer than a batch. */
async function drain(
  knex: Knex,
  sql: string,
  bindings: readonly Knex.RawBinding[],
  limits: RowRetentionLimits,
): Promise<number> {
  let total = 0;
  for (let i = 0; i < limits.maxBatches; i++) {
    const { rows } = (await knex.raw(sql, [...bindings])) as { rows: { n: number }[] };
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < limits.batch) break;
  }
  return total;
}

/**
 * A tenant's deliveries (with their attempts) and outbox events dated before `cutoff`, or,
 * with `tenantId` null, those of every tenant not in `except` (the deployment's default
 * retention, for rows in a partition still kept for a tenant who keeps longer).
 */
export async function deleteDeliveryHistory(
  knex: Knex,
  who: { tenantId: string } | { except: string[] },
  cutoff: Date,
  limits: RowRetentionLimits,
): Promise<number> {
  const [cond, arg] =
    'tenantId' in who
      ? ['tenant_id = ?', who.tenantId]
      : ['NOT (tenant_id = ANY (?::text[]))', who.except];
  const deliveries = await drain(
    knex,
    `WITH d AS (
       DELETE FROM webhook_deliveries WHERE (id, created_at) IN (
         SELECT id, created_at FROM webhook_deliveries
          WHERE ${cond} AND created_at < ? LIMIT ${limits.batch})
       RETURNING id),
     a AS (DELETE FROM webhook_delivery_attempts w USING d WHERE w.delivery_id = d.id)
     SELECT count(*)::int AS n FROM d`,
    [arg, cutoff],
    limits,
  );
  const events = await drain(
    knex,
    `WITH e AS (
       DELETE FROM events WHERE (id, created_at) IN (
         SELECT id, created_at FROM events
          WHERE ${cond} AND created_at < ? AND fanned_out_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM event_outbox o WHERE o.event_id = events.id)
          LIMIT ${limits.batch})
       RETURNING 1)
     SELECT count(*)::int AS n FROM e`,
    [arg, cutoff],
    limits,
  );
  return deliveries + events;
}

/** A tenant's calls and SMS dated before `cutoff` (its `--calls-days`). */
export async function deleteCallHistory(
  knex: Knex,
  tenantId: string,
  cutoff: Date,
  limits: RowRetentionLimits,
): Promise<number> {
  const calls = await drain(
    knex,
    `WITH x AS (DELETE FROM calls WHERE (id, started_at) IN (
       SELECT id, started_at FROM calls WHERE tenant_id = ? AND started_at < ?
        LIMIT ${limits.batch}) RETURNING 1)
     SELECT count(*)::int AS n FROM x`,
    [tenantId, cutoff],
    limits,
  );
  const sms = await drain(
    knex,
    `WITH x AS (DELETE FROM sms_messages WHERE (id, created_at) IN (
       SELECT id, created_at FROM sms_messages
        WHERE receptionist_id IN (SELECT id FROM receptionists WHERE tenant_id = ?)
          AND created_at < ? LIMIT ${limits.batch}) RETURNING 1)
     SELECT count(*)::int AS n FROM x`,
    [tenantId, cutoff],
    limits,
  );
  return calls + sms;
}

/**
 * Idempotency records past their 24 hours: the keys (and request fingerprints) of calls and
 * SMS older than a day are cleared, as their Redis entries expired; the uniqueness trigger
 * already ignores them (migration 020's, ../migrations/frozen/020_partitioning/uniqueness.ts).
 */
export async function clearIdempotencyKeys(
  knex: Knex,
  before: Date,
  limits: RowRetentionLimits,
): Promise<number> {
  let total = 0;
  for (const [table, key] of [
    ['calls', 'started_at'],
    ['sms_messages', 'created_at'],
  ] as const) {
    total += await drain(
      knex,
      `WITH x AS (UPDATE ${table} SET idempotency_key = NULL, idempotency_fingerprint = NULL
          WHERE (id, ${key}) IN (SELECT id, ${key} FROM ${table}
                                  WHERE idempotency_key IS NOT NULL AND ${key} < ?
                                  LIMIT ${limits.batch})
         RETURNING 1)
       SELECT count(*)::int AS n FROM x`,
      [before],
      limits,
    );
  }
  return total;
}
