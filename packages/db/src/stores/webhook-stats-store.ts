import type { Knex } from 'knex';

/** One minute of a subscription's delivery health. */
export interface DeliveryMinute {
  start: Date;
  /** Deliveries that ended this minute, by outcome. */
  succeeded: number;
  failed: number;
  /** Percentiles of the durations of the attempts made this minute; null without attempts. */
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface DeliveryStats {
  minutes: DeliveryMinute[];
  succeeded: number;
  failed: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

interface MinuteRow {
  minute: Date;
  succeeded: string | number;
  failed: string | number;
  p50: number | null;
  p99: number | null;
}

const ms = (v: number | null): number | null => (v === null ? null : Math.round(Number(v)));

/**
 * Delivery health of one subscription since a time, aggregated in Postgres: one row per
 * minute that had an ending delivery or an attempt (empty minutes are not sent), plus the
 * window's totals. Only rows of the last `since` window are read (the log index and the
 * attempts' delivery index), never the whole log.
 *
 * The attempts are the attempt rows of those deliveries and each one's latest attempt, read
 * from the delivery row already selected (it is on the row until a later attempt supersedes
 * it: delivery-lifecycle-sql.ts), so the latest costs no second read of the deliveries.
 */
const ATTEMPTS_SQL = `SELECT a.attempted_at, a.duration_ms
         FROM webhook_delivery_attempts a JOIN d ON d.id = a.delivery_id
        WHERE a.attempted_at >= ?::timestamptz
       UNION ALL
       SELECT d.latest_attempted_at, d.latest_duration_ms FROM d
        WHERE d.latest_attempted_at >= ?::timestamptz`;

/** The subscription's deliveries that may have attempts since `since` (bindings: id, since). */
const DELIVERIES_SQL = `SELECT id, status, completed_at, latest_attempted_at, latest_duration_ms
         FROM webhook_deliveries
        WHERE subscription_id = ? AND created_at >= ?::timestamptz - interval '1 day'`;
export class WebhookStatsStore {
  constructor(private readonly db: Knex) {}

  async forSubscription(subscriptionId: string, since: Date): Promise<DeliveryStats> {
    const minutes = await this.db.raw<{ rows: MinuteRow[] }>(
      `WITH d AS (${DELIVERIES_SQL}), ended AS (
         SELECT date_trunc('minute', completed_at) AS minute,
                count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
                count(*) FILTER (WHERE status = 'failed') AS failed
           FROM d WHERE completed_at >= ?::timestamptz AND status IN ('succeeded', 'failed')
          GROUP BY 1
       ), lat AS (
         SELECT date_trunc('minute', a.attempted_at) AS minute,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS p50,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY a.duration_ms) AS p99
           FROM (${ATTEMPTS_SQL}) a
          GROUP BY 1
       )
       SELECT coalesce(ended.minute, lat.minute) AS minute,
              coalesce(ended.succeeded, 0) AS succeeded, coalesce(ended.failed, 0) AS failed,
              lat.p50, lat.p99
         FROM ended FULL JOIN lat ON lat.minute = ended.minute
        ORDER BY 1`,
      [subscriptionId, since, since, since, since],
    );
    const totals = await this.db.raw<{ rows: Array<{ p50: number | null; p99: number | null }> }>(
      `WITH d AS (${DELIVERIES_SQL})
       SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY a.duration_ms) AS p99
         FROM (${ATTEMPTS_SQL}) a`,
      [subscriptionId, since, since, since],
    );
    const rows = minutes.rows.map((r) => ({
      start: r.minute,
      succeeded: Number(r.succeeded),
      failed: Number(r.failed),
      p50Ms: ms(r.p50),
      p99Ms: ms(r.p99),
    }));
    const total = totals.rows[0];
    return {
      minutes: rows,
      succeeded: rows.reduce((n, r) => n + r.succeeded, 0),
      failed: rows.reduce((n, r) => n + r.failed, 0),
      p50Ms: ms(total?.p50 ?? null),
      p99Ms: ms(total?.p99 ?? null),
    };
  }
}
