import type { Knex } from 'knex';
import { idTimeWindow, widenTimeWindow } from '../ids';
import { atOrAfterFloorSql, lowerDeliveriesFloorSql } from '../partitions/pending-floors';
import { runPrepared } from '../prepared';
import { toPgJson, toPgText } from '../text';
import { toDelivery, type Delivery, type DeliveryRow } from './deliveries-store';
import {
  CLAIM_EVENTS_SQL,
  CLAIM_SQL,
  EXHAUST_SQL,
  OPEN_COLUMNS,
  RECORD_SQL,
  type ClaimRow,
  type OpenRow,
} from './delivery-lifecycle-sql';
import { PUBLISH_NEXT_SQL, type PublishNextRow } from './publish-next-sql';

/**
 * Every transition of a webhook delivery, one statement each:
 *
 *                         pending ──claim──▶ delivering ──record──▶ succeeded
 *   (relay) ──publishNext (created claimed)──────▶ │  │
 *                            ▲                  │  │ └──record (retry)──▶ pending (next attempt)
 *                            │                  │  └──exhaust──▶ failed (may disable the subscription)
 *                            └──release─────────┘
 *   pending | delivering ──cancel──▶ canceled;  any ──newRound──▶ pending (manual retry)
 *   failed | canceled ──resend──▶ pending (a recovery; it also creates the deliveries a
 *   disabled subscription missed, as publishNext would have: webhook-recoveries-store.ts)
 *
 * One way to pass a transaction: every method takes the connection or transaction to run on
 * first (`db`). The hot transitions (publishNext, claim, record) take a batch: the worker
 * coalesces the deliveries in flight in one process into one statement per batch
 * (`= ANY($1)` / `unnest`), a batch of one being the single case.
 *
 * publishNext, claim, record and exhaust commit asynchronously (ASYNC_COMMIT_CTE): one lost
 * in a Postgres crash is redone by the reconciler, and a redelivery carries the same event id
 * (at least once). The outbox event itself was committed durably by its producer.
 */
export class DeliveryLifecycle {
  /**
   * The relay's batch (PUBLISH_NEXT_SQL, one statement): claims events of the outbox, tenants
   * in turn after `after`, as many as fit the room (`rooms` for the tenants named, else
   * `otherRoom`; `limit` deliveries in all), and fans them out, each delivery created claimed for
   * `lockMs` by the caller, which makes its first attempt. Returns those deliveries (as
   * `claim` returns them, one event of each tenant at a time), how many events left the
   * outbox, and the tenant the next batch starts after.
   */
  async publishNext(
    db: Knex,
    opts: {
      after: string;
      maxTenants?: number;
      rooms?: ReadonlyMap<string, number>;
      otherRoom: number;
      limit: number;
      lockMs: number;
    },
  ): Promise<{ made: ClaimedDelivery[]; relayed: number; next: string }> {
    const rooms = opts.rooms ?? new Map<string, number>();
    const rows = await runPrepared<PublishNextRow>(db, 'sb_dl_publish_next', PUBLISH_NEXT_SQL, [
      opts.after,
      opts.maxTenants ?? 100,
      [...rooms.keys()],
      [...rooms.values()],
      opts.otherRoom,
      opts.limit,
      opts.lockMs / 1000,
    ]);
    const first = rows[0];
    return {
      made: rows.flatMap((r) => (r.id && r.event ? [toClaimed(r as ClaimRow, r.event)] : [])),
      relayed: first?.relayed ?? 0,
      next: first?.next_tenant ?? '',
    };
  }

  /**
   * Claims attempts, one statement for the batch; the result is aligned with `requests`
   * (undefined: not claimed). Only a request for the row's exact round and attempt claims it,
   * and only one at a time (a duplicate request in the same batch gets nothing); a claim left
   * by a crashed worker lapses at `locked_until`. The claim counts itself in `claims`, and
   * returns the event and the subscription's target as they are now.
   */
  async claim(
    db: Knex,
    requests: readonly ClaimRequest[],
    lockMs: number,
  ): Promise<Array<ClaimedDelivery | undefined>> {
    if (requests.length === 0) return [];
    const { arrays, bounds } = requestParams(requests);
    const rows = await runPrepared<ClaimRow>(db, 'sb_dl_claim', CLAIM_SQL, [
      ...arrays,
      lockMs / 1000,
      ...bounds,
    ]);
    return aligned(db, rows, requests);
  }

  /**
   * Records attempts that succeeded or will be retried, one statement for the batch: each
   * attempt as its delivery's latest, and the latest it supersedes as an attempt row (unless
   * `logAttempt` is false: the last resort when the attempt cannot be stored; see RECORD_SQL);
   * each delivery row, only if it is still at the claimed round and attempt (a manual retry
   * may have started a new round); the subscriptions' timestamps and streak, only for
   * deliveries that moved, and only when that changes more than sub-second timestamps (so
   * concurrent deliveries do not queue on the subscription row). Subscription rows are locked
   * in id order: two batches never wait on each other in a cycle. Returns, aligned with
   * `records`, whether each delivery moved. A delivery must appear at most once per batch.
   */
  async record(db: Knex, records: readonly AttemptRecord[]): Promise<boolean[]> {
    if (records.length === 0) return [];
    const rows = await runPrepared<{ moved: string[] | null }>(db, 'sb_dl_record', RECORD_SQL, [
      records.map((r) => r.delivery.id),
      records.map((r) => r.delivery.round),
      records.map((r) => r.delivery.attempts + 1),
      records.map((r) => r.statusCode),
      records.map((r) => r.error),
      records.map((r) => r.durationMs),
      records.map((r) => (r.excerpt === null ? null : toPgText(r.excerpt))),
      records.map((r) => r.outcome.kind === 'succeeded'),
      records.map((r) => (r.outcome.kind === 'retry' ? r.outcome.nextAttemptAt : null)),
      records.map((r) => r.delivery.subscriptionId),
      records.map((r) => r.logAttempt),
      records.map((r) => headersJson(r.requestHeaders)),
      records.map((r) => headersJson(r.responseHeaders)),
      ...idTimeWindow(records.map((r) => r.delivery.id)),
    ]);
    const moved = new Set(rows[0]?.moved ?? []);
    return records.map((r) => moved.has(r.delivery.id));
  }

  /**
   * Records the last allowed attempt, failed, in one statement: the attempt (kept as in
   * RECORD_SQL), the delivery row (only if still at the claimed round and attempt), the
   * subscription's streak grown by one from its current value (concurrent failures never
   * lose a count) and, when that reaches `disableAfter`, the subscription disabled and its
   * other open deliveries canceled. `disabledNow` is true only for the statement that
   * crossed the threshold.
   */
  async exhaust(
    db: Knex,
    record: Omit<AttemptRecord, 'outcome'>,
    disableAfter: number,
  ): Promise<Exhausted> {
    const d = record.delivery;
    const rows = await runPrepared<{
      moved: number;
      failures: number | null;
      disabled_now: boolean | null;
      canceled: number;
    }>(db, 'sb_dl_exhaust', EXHAUST_SQL, [
      d.id,
      d.round,
      d.attempts + 1,
      record.statusCode,
      record.error,
      record.durationMs,
      record.excerpt === null ? null : toPgText(record.excerpt),
      d.subscriptionId,
      record.logAttempt,
      disableAfter,
      headersJson(record.requestHeaders),
      headersJson(record.responseHeaders),
      ...idTimeWindow([d.id]),
    ]);
    const r = rows[0];
    return {
      moved: (r?.moved ?? 0) > 0,
      consecutiveFailures: r?.failures ?? null,
      disabledNow: r?.disabled_now === true,
      canceled: r?.canceled ?? 0,
    };
  }

  /**
   * Gives claimed deliveries back, unattempted, to be tried again in `delayMs`; each claim
   * takes itself off the count (it sent nothing).
   */
  async release(db: Knex, ids: readonly string[], delayMs: number): Promise<void> {
    if (ids.length === 0) return;
    await db.raw(
      `UPDATE webhook_deliveries
          SET status = 'pending', locked_until = NULL, claims = greatest(claims - 1, 0),
              next_attempt_at = now() + make_interval(secs => ?), updated_at = now()
        WHERE id = ANY (?::text[]) AND created_at >= ? AND created_at < ?
          AND status = 'delivering'`,
      [delayMs / 1000, [...ids], ...idTimeWindow(ids)],
    );
  }

  /** Marks an open delivery canceled (its target is gone or disabled). */
  async cancel(db: Knex, id: string): Promise<void> {
    await db.raw(
      `UPDATE webhook_deliveries
          SET status = 'canceled', locked_until = NULL, completed_at = now(), updated_at = now()
        WHERE id = ? AND created_at >= ? AND created_at < ?
          AND status IN ('pending', 'delivering')`,
      [id, ...idTimeWindow([id])],
    );
  }

  /**
   * Starts a fresh round of attempts (manual retry); undefined when no such delivery. The
   * previous round's last attempt stays on the row as its latest (listed with its round)
   * until the new round's first logged attempt supersedes it and inserts it as a row.
   */
  async newRound(db: Knex, subscriptionId: string, id: string): Promise<Delivery | undefined> {
    // A final delivery pending again: the pending floor comes down to it (pending-floors.ts).
    const { rows } = (await db.raw(
      `WITH d AS (
         UPDATE webhook_deliveries
            SET status = 'pending', attempts = 0, round = round + 1, next_attempt_at = now(),
                locked_until = NULL, claims = 0, completed_at = NULL, updated_at = now()
          WHERE id = ? AND created_at >= ? AND created_at < ? AND subscription_id = ?
      RETURNING *
       ), floor AS (${lowerDeliveriesFloorSql('(SELECT min(created_at) FROM d)')})
       SELECT * FROM d`,
      [id, ...idTimeWindow([id]), subscriptionId],
    )) as { rows: DeliveryRow[] };
    const row = rows[0];
    return row && toDelivery(row);
  }

  /**
   * failed | canceled → pending in a fresh round (as `newRound`), for every final delivery of
   * the tenant's subscription made in `[since, until)`: a recovery's resend, in the
   * recovery's transaction (webhook-recoveries-store.ts). Returns them to enqueue.
   */
  async resend(
    db: Knex,
    range: { tenantId: string; subscriptionId: string; since: Date; until: Date },
  ): Promise<OpenDelivery[]> {
    // Final deliveries pending again: the pending floor comes down to the oldest
    // (packages/db/src/partitions/pending-floors.ts).
    const { rows } = (await db.raw(
      `WITH d AS (
         UPDATE webhook_deliveries
            SET status = 'pending', attempts = 0, round = round + 1, next_attempt_at = now(),
                locked_until = NULL, claims = 0, completed_at = NULL, updated_at = now()
          WHERE subscription_id = ? AND tenant_id = ? AND status IN ('failed', 'canceled')
            AND created_at >= ? AND created_at < ?
      RETURNING ${OPEN_COLUMNS}, created_at
       ), floor AS (${lowerDeliveriesFloorSql('(SELECT min(created_at) FROM d)')})
       SELECT ${OPEN_COLUMNS} FROM d`,
      [range.subscriptionId, range.tenantId, range.since, range.until],
    )) as { rows: OpenRow[] };
    return rows.map(toOpenDelivery);
  }

  /**
   * Makes the waiting deliveries of a subscription due now (it was resumed): they were
   * released unattempted while it was paused. Returns up to `limit` of them to enqueue; the
   * reconciler finds the rest, which are overdue from now on.
   */
  async wake(db: Knex, subscriptionId: string, limit: number): Promise<OpenDelivery[]> {
    const { rows } = (await db.raw(
      `UPDATE webhook_deliveries SET next_attempt_at = now(), updated_at = now()
        WHERE subscription_id = ? AND status = 'pending' AND next_attempt_at > now()
          AND ${atOrAfterFloorSql('webhook_deliveries', 'created_at')}
    RETURNING ${OPEN_COLUMNS}`,
      [subscriptionId],
    )) as { rows: OpenRow[] };
    return rows.slice(0, limit).map(toOpenDelivery);
  }

  /**
   * Open deliveries whose next step is overdue by `graceMs`: the reconciler's work list. This
   * and the lapse check read the days from the deliveries' pending floor on
   * (packages/db/src/partitions/pending-floors.ts), not every day kept.
   */
  async overdue(db: Knex, graceMs: number, limit: number): Promise<OpenDelivery[]> {
    const { rows } = (await db.raw(
      `SELECT ${OPEN_COLUMNS} FROM webhook_deliveries
        WHERE status IN ('pending', 'delivering')
          AND next_attempt_at < now() - make_interval(secs => ?)
          AND (locked_until IS NULL OR locked_until < now())
          AND ${atOrAfterFloorSql('webhook_deliveries', 'created_at')}
        ORDER BY next_attempt_at LIMIT ?`,
      [graceMs / 1000, limit],
    )) as { rows: OpenRow[] };
    return rows.map(toOpenDelivery);
  }

  /**
   * Claimed deliveries whose claim has lapsed (their worker died mid-attempt): due again at
   * once, whatever their next_attempt_at. Oldest lapse first.
   */
  async lapsed(db: Knex, limit: number): Promise<OpenDelivery[]> {
    const { rows } = (await db.raw(
      `SELECT ${OPEN_COLUMNS} FROM webhook_deliveries
        WHERE status = 'delivering' AND locked_until < now()
          AND ${atOrAfterFloorSql('webhook_deliveries', 'created_at')}
        ORDER BY locked_until LIMIT ?`,
      [limit],
    )) as { rows: OpenRow[] };
    return rows.map(toOpenDelivery);
  }

  /**
   * Prepares the worker's hot statements (the relay's batch, the claim, the record) on up to
   * `connections` pooled connections (each runs once with empty input, which writes nothing),
   * so that the first deliveries after boot are as fast as the rest.
   */
  async prepare(db: Knex, connections: number): Promise<void> {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        const [from, to] = idTimeWindow([]);
        // Claims nothing: no tenant has room.
        await runPrepared(db, 'sb_dl_publish_next', PUBLISH_NEXT_SQL, ['', 1, [], [], 0, 0, 1]);
        await runPrepared(db, 'sb_dl_claim', CLAIM_SQL, [[], [], [], 1, from, to, from, to]);
        // One empty array per array parameter of RECORD_SQL ($1 to $13), then the window.
        await runPrepared(db, 'sb_dl_record', RECORD_SQL, [
          ...Array.from({ length: 13 }, () => []),
          from,
          to,
        ]);
      }),
    );
  }
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * CLAIM_SQL's parameters: the requests as arrays (ids, rounds, attempts
 * made so far), and the bounds on the deliveries' created_at and on their events'.
 */
function requestParams(requests: readonly ClaimRequest[]) {
  const ids = requests.map((r) => r.deliveryId);
  const window = idTimeWindow(ids);
  return {
    arrays: [ids, requests.map((r) => r.round), requests.map((r) => r.attempt - 1)],
    bounds: [...window, ...widenTimeWindow(window, DAY_MS, HOUR_MS)],
  };
}

/**
 * The rows a claim returned, aligned with its requests by delivery, round and
 * attempt (undefined: not returned), their far events found first. A duplicate request of
 * the same batch gets nothing.
 */
async function aligned(
  db: Knex,
  rows: ClaimRow[],
  requests: readonly ClaimRequest[],
): Promise<Array<ClaimedDelivery | undefined>> {
  await findFarEvents(db, rows);
  const byKey = new Map(rows.map((r) => [`${r.id}/${r.round}/${r.attempts}`, r]));
  return requests.map((req) => {
    const key = `${req.deliveryId}/${req.round}/${req.attempt - 1}`;
    const r = byKey.get(key);
    byKey.delete(key);
    return r?.event ? toClaimed(r, r.event) : undefined;
  });
}

/**
 * Fills in the events CLAIM_SQL did not find near their deliveries (see there), looked up by
 * id in one statement; an event found nowhere (dropped) leaves its row's `event` null.
 */
async function findFarEvents(db: Knex, rows: ClaimRow[]): Promise<void> {
  const far = rows.filter((r) => r.event === null);
  if (far.length === 0) return;
  const ids = [...new Set(far.map((r) => r.event_id))];
  const { rows: found } = (await db.raw(CLAIM_EVENTS_SQL, [ids, ...idTimeWindow(ids)])) as {
    rows: Array<{ id: string; event: NonNullable<ClaimRow['event']> }>;
  };
  const byId = new Map(found.map((e) => [e.id, e.event]));
  for (const r of far) r.event = byId.get(r.event_id) ?? null;
}

/** What it takes to run or enqueue a delivery's next attempt: its ids, counters and lanes. */
export type OpenDelivery = Pick<
  Delivery,
  | 'id'
  | 'tenantId'
  | 'eventId'
  | 'subscriptionId'
  | 'receptionistId'
  | 'round'
  | 'attempts'
  | 'claims'
  | 'nextAttemptAt'
>;

export interface ClaimRequest {
  deliveryId: string;
  round: number;
  /** The attempt to make (1-based): the row must have made `attempt - 1`. */
  attempt: number;
}

export interface ClaimedDelivery {
  delivery: Delivery;
  event: {
    id: string;
    type: string;
    data: Record<string, unknown>;
    receptionistId: string | null;
    createdAt: Date;
    /** The trace the event was written in (W3C traceparent); null when tracing was off. */
    traceparent: string | null;
    /** false: a test-mode event (docs/API.md, Test mode). */
    livemode: boolean;
  };
  /** The subscription's target as it is now (null for legacy or deleted subscriptions). */
  subscription: {
    url: string;
    isActive: boolean;
    /** Paused by the tenant (disabled_reason manual): its deliveries wait, never cancelled. */
    paused: boolean;
    tenantId: string;
    ciphertext: string;
    /** The previous secret while a rotation's overlap lasts, else null. */
    previousCiphertext: string | null;
    rateLimitPerSecond: number | null;
  } | null;
}

/** One attempt as it happened, for the delivery as it was claimed. */
export interface AttemptRecord {
  delivery: Pick<Delivery, 'id' | 'round' | 'attempts' | 'subscriptionId'>;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  excerpt: string | null;
  /** The headers sent and received, for the delivery log; null when not known. */
  requestHeaders?: Record<string, string> | null;
  responseHeaders?: Record<string, string> | null;
  outcome: { kind: 'succeeded' } | { kind: 'retry'; nextAttemptAt: Date };
  /**
   * False: the last resort when the attempt itself cannot be stored. It is then not listed:
   * the delivery's latest attempt stays as it was and no attempt row is inserted.
   */
  logAttempt: boolean;
}

export interface Exhausted {
  moved: boolean;
  /** The subscription's streak after this failure (null: legacy delivery or superseded). */
  consecutiveFailures: number | null;
  disabledNow: boolean;
  /** Other open deliveries of the subscription canceled because it was disabled now. */
  canceled: number;
}

/** Headers as JSON text for a jsonb parameter (toPgJson); null when absent. */
const headersJson = (h: Record<string, string> | null | undefined): string | null =>
  h ? toPgJson(h) : null;

/** A delivery row's ids, counters and lanes, as every statement returning `OPEN_COLUMNS` reads them. */
export const toOpenDelivery = (r: OpenRow): OpenDelivery => ({
  id: r.id,
  tenantId: r.tenant_id,
  eventId: r.event_id,
  subscriptionId: r.subscription_id,
  receptionistId: r.receptionist_id,
  round: r.round,
  attempts: r.attempts,
  claims: r.claims,
  nextAttemptAt: r.next_attempt_at,
});

const toClaimed = (r: ClaimRow, e: NonNullable<ClaimRow['event']>): ClaimedDelivery => ({
  delivery: toDelivery(r),
  event: {
    id: r.event_id,
    type: e.type,
    data: e.data,
    receptionistId: e.receptionist_id,
    createdAt: new Date(e.created_at),
    traceparent: e.traceparent ?? null,
    livemode: e.livemode,
  },
  subscription: r.subscription && {
    url: r.subscription.url,
    isActive: r.subscription.is_active,
    paused: !r.subscription.is_active && r.subscription.disabled_reason === 'manual',
    tenantId: r.subscription.tenant_id,
    ciphertext: r.subscription.ciphertext,
    previousCiphertext: r.subscription.previous_ciphertext,
    rateLimitPerSecond: r.subscription.rate_limit_per_second,
  },
});
