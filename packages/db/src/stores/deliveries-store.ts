import type { Knex } from 'knex';
import { keysetPage, type KeysetPage, type KeysetPosition } from '../keyset';
import { toPgText } from '../text';

const TABLE = 'webhook_deliveries';

export type DeliveryStatus = 'pending' | 'delivering' | 'succeeded' | 'failed' | 'canceled';
export const FINAL_DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'succeeded',
  'failed',
  'canceled',
];

export interface Delivery {
  id: string;
  tenantId: string;
  eventId: string;
  /** Set for subscription deliveries; null for the legacy receptionist webhook_url. */
  subscriptionId: string | null;
  receptionistId: string | null;
  status: DeliveryStatus;
  attempts: number;
  round: number;
  /** Claims of the current attempt whose outcome was not recorded (see migration 007). */
  claims: number;
  nextAttemptAt: Date | null;
  lockedUntil: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  completedAt: Date | null;
  firstSuccessAt: Date | null;
}

/** The row shape; exported for the package's multi-table hot-path statements only. */
export interface DeliveryRow {
  id: string;
  tenant_id: string;
  event_id: string;
  subscription_id: string | null;
  receptionist_id: string | null;
  status: DeliveryStatus;
  attempts: number;
  round: number;
  claims: number;
  next_attempt_at: Date | null;
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  first_success_at: Date | null;
}

export const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  tenantId: r.tenant_id,
  eventId: r.event_id,
  subscriptionId: r.subscription_id,
  receptionistId: r.receptionist_id,
  status: r.status,
  attempts: r.attempts,
  round: r.round,
  claims: r.claims,
  nextAttemptAt: r.next_attempt_at,
  lockedUntil: r.locked_until,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  completedAt: r.completed_at,
  firstSuccessAt: r.first_success_at,
});

/** What one attempt's outcome does to its delivery row. */
export type AttemptOutcome =
  { kind: 'succeeded' } | { kind: 'retry'; nextAttemptAt: Date } | { kind: 'failed' };

export class DeliveriesStore {
  constructor(private readonly db: Knex) {}

  async get(id: string, db: Knex = this.db): Promise<Delivery | undefined> {
    const row = await db<DeliveryRow>(TABLE).where({ id }).first();
    return row && toDelivery(row);
  }

  /**
   * Records one attempt and its outcome on the delivery row, in the caller's transaction.
   * The row is only moved on if it is still at the claimed round and attempt: a manual retry
   * that started a new round meanwhile wins, and `false` says this outcome was superseded
   * (the attempt itself is still logged, because it happened). `logAttempt` false skips the
   * attempt row: the last resort when that row cannot be stored. The response excerpt is
   * outside text: stored through `toPgText`.
   */
  async recordAttempt(
    trx: Knex,
    d: Delivery,
    attempt: {
      statusCode: number | null;
      error: string | null;
      durationMs: number;
      excerpt: string | null;
    },
    outcome: AttemptOutcome,
    logAttempt = true,
  ): Promise<boolean> {
    if (logAttempt) {
      await trx('webhook_delivery_attempts').insert({
        delivery_id: d.id,
        round: d.round,
        attempt: d.attempts + 1,
        status_code: attempt.statusCode,
        error: attempt.error,
        duration_ms: attempt.durationMs,
        response_excerpt: attempt.excerpt === null ? null : toPgText(attempt.excerpt),
      });
    }
    const final = outcome.kind !== 'retry';
    const moved = await trx(TABLE)
      .where({ id: d.id, round: d.round, attempts: d.attempts, status: 'delivering' })
      .update({
        status: outcome.kind === 'retry' ? 'pending' : outcome.kind,
        attempts: d.attempts + 1,
        next_attempt_at: outcome.kind === 'retry' ? outcome.nextAttemptAt : null,
        locked_until: null,
        claims: 0,
        last_status_code: attempt.statusCode,
        last_error: attempt.error,
        updated_at: trx.fn.now(),
        completed_at: final ? trx.fn.now() : null,
        first_success_at:
          outcome.kind === 'succeeded'
            ? trx.raw('coalesce(first_success_at, now())')
            : trx.raw('first_success_at'),
      });
    return moved > 0;
  }

  /**
   * Gives a claimed delivery back, unattempted, to be tried again in `delayMs`; the claim
   * takes itself off the count (it sent nothing).
   */
  async release(id: string, delayMs: number): Promise<void> {
    await this.db(TABLE)
      .where({ id, status: 'delivering' })
      .update({
        status: 'pending',
        locked_until: null,
        claims: this.db.raw('greatest(claims - 1, 0)'),
        next_attempt_at: this.db.raw('now() + make_interval(secs => ?)', [delayMs / 1000]),
        updated_at: this.db.fn.now(),
      });
  }

  /** Marks a delivery canceled (its target is gone or disabled). */
  async cancel(id: string): Promise<void> {
    await this.db(TABLE).where({ id }).whereIn('status', ['pending', 'delivering']).update({
      status: 'canceled',
      locked_until: null,
      completed_at: this.db.fn.now(),
      updated_at: this.db.fn.now(),
    });
  }

  /** Cancels every open delivery of a subscription (on auto-disable). */
  async cancelOpenForSubscription(trx: Knex, subscriptionId: string): Promise<number> {
    return trx(TABLE)
      .where({ subscription_id: subscriptionId })
      .whereIn('status', ['pending', 'delivering'])
      .update({
        status: 'canceled',
        locked_until: null,
        completed_at: trx.fn.now(),
        updated_at: trx.fn.now(),
      });
  }

  /** Starts a fresh round of attempts (manual retry); undefined when no such delivery. */
  async startNewRound(subscriptionId: string, id: string): Promise<Delivery | undefined> {
    const [row] = await this.db<DeliveryRow>(TABLE)
      .where({ id, subscription_id: subscriptionId })
      .update({
        status: 'pending',
        attempts: 0,
        round: this.db.raw('round + 1'),
        next_attempt_at: this.db.fn.now(),
        locked_until: null,
        claims: 0,
        completed_at: null,
        updated_at: this.db.fn.now(),
      })
      .returning('*');
    return row && toDelivery(row as DeliveryRow);
  }

  /** Open deliveries whose next step is overdue by `graceMs`: the reconciler's work list. */
  async overdue(graceMs: number, limit: number): Promise<Delivery[]> {
    const rows = await this.db<DeliveryRow>(TABLE)
      .whereIn('status', ['pending', 'delivering'])
      .andWhere(
        'next_attempt_at',
        '<',
        this.db.raw(`now() - make_interval(secs => ?)`, [graceMs / 1000]),
      )
      .andWhere((q) => q.whereNull('locked_until').orWhere('locked_until', '<', this.db.fn.now()))
      .orderBy('next_attempt_at')
      .limit(limit);
    return rows.map(toDelivery);
  }

  /** A subscription's delivery log, newest first. */
  async listForSubscription(
    subscriptionId: string,
    page: { limit: number; after?: KeysetPosition | null },
  ): Promise<KeysetPage<Delivery & { eventType: string }>> {
    const result = await keysetPage<DeliveryRow & { event_type: string }>(
      this.db(`${TABLE} as d`)
        .join('events as e', 'e.id', 'd.event_id')
        .where('d.subscription_id', subscriptionId)
        .select('d.*', 'e.type as event_type'),
      {
        timeColumn: 'd.created_at',
        idColumn: 'd.id',
        ...page,
        position: (r) => ({ t: r.created_at.getTime(), id: r.id }),
      },
    );
    return {
      rows: result.rows.map((r) => ({ ...toDelivery(r), eventType: r.event_type })),
      next: result.next,
    };
  }
}
