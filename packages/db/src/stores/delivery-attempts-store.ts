import type { Knex } from 'knex';
import { idTimeWindow } from '../ids';

/**
 * Every attempt: the attempt rows and each delivery's latest attempt, kept on its row until a
 * later one supersedes it (migration 096, delivery-lifecycle-sql.ts).
 */
const ATTEMPTS = 'webhook_delivery_attempts_all';

export interface DeliveryAttempt {
  deliveryId: string;
  round: number;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
  attemptedAt: Date;
  /** Headers sent (signatures, never the secret) and received; null for older attempts. */
  requestHeaders: Record<string, string> | null;
  responseHeaders: Record<string, string> | null;
}

interface AttemptRow {
  delivery_id: string;
  round: number;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
  attempted_at: Date;
  request_headers: Record<string, string> | null;
  response_headers: Record<string, string> | null;
}

const toAttempt = (r: AttemptRow): DeliveryAttempt => ({
  deliveryId: r.delivery_id,
  round: r.round,
  attempt: r.attempt,
  statusCode: r.status_code,
  error: r.error,
  durationMs: r.duration_ms,
  responseExcerpt: r.response_excerpt,
  attemptedAt: r.attempted_at,
  requestHeaders: r.request_headers ?? null,
  responseHeaders: r.response_headers ?? null,
});

/** Attempts are written by DeliveryLifecycle (with the delivery row they move); read here. */
export class DeliveryAttemptsStore {
  constructor(private readonly db: Knex) {}

  /** Every attempt of these deliveries, oldest first, grouped by delivery id. */
  async forDeliveries(ids: string[]): Promise<Map<string, DeliveryAttempt[]>> {
    const out = new Map<string, DeliveryAttempt[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return out;
    // An attempt follows its delivery: the days before the oldest delivery's are skipped, in
    // both tables (`partition_at` is each one's partition key, and no later than either).
    const [from] = idTimeWindow(ids);
    const rows = await this.db<AttemptRow>(ATTEMPTS)
      .whereIn('delivery_id', ids)
      .andWhere('attempted_at', '>=', from)
      .andWhere('partition_at', '>=', from)
      // A delivery's attempts in the order they were made (its latest has no row id).
      .orderBy([{ column: 'attempted_at' }, { column: 'round' }, { column: 'attempt' }]);
    for (const row of rows) out.get(row.delivery_id)?.push(toAttempt(row));
    return out;
  }
}
