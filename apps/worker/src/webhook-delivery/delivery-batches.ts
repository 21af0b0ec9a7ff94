import {
  Batcher,
  type BatcherOptions,
  type DeliveryLifecycle,
  isTransientDbError,
  type AttemptRecord,
  type ClaimedDelivery,
  type ClaimRequest,
  type Knex,
} from '@switchboard/db';

/**
 * The delivery lifecycle's hot transitions as the jobs of one worker process call them: each
 * call joins the batch of its kind, and a batch is one statement (see DeliveryLifecycle).
 * Postgres then sees a few statements per batch instead of several per delivery.
 */
export interface DeliveryBatches {
  lifecycle: DeliveryLifecycle;
  claim(request: ClaimRequest): Promise<ClaimedDelivery | undefined>;
  record(record: AttemptRecord): Promise<boolean>;
}

/**
 * Per kind of statement: at most BATCH_MAX_RUNNING batches in flight (records:
 * RECORD_MAX_RUNNING); calls made meanwhile wait for one to end, at most BATCH_MAX_WAIT_MS, or
 * until BATCH_MAX_ITEMS are queued.
 */
export const BATCH_MAX_RUNNING = 2;
/**
 * Records one batch at a time (another starts beside it only for calls that waited
 * BATCH_MAX_WAIT_MS): two record statements at once write the same subscription rows and
 * the pages of the same deliveries, and Postgres spent a fifth more CPU a delivery on them
 * (decision 0128).
 */
export const RECORD_MAX_RUNNING = 1;
/**
 * Records gather (decision 0141): the outcomes that came while a record statement ran go
 * when the first of them has waited BATCH_MAX_WAIT_MS, not the moment it ends, and one that
 * finds none running waits until RECORD_GAP_MS after the last ended. Back to back, a busy
 * worker sent a statement of about ten outcomes each time one ended; gathered, fewer and
 * larger ones: Postgres spent 9–21 % less CPU a delivery with ten subscriptions, 0–19 % with
 * one. An outcome's record waits at most BATCH_MAX_WAIT_MS longer; its unit and lane slot
 * were given back when its POST ended.
 */
export const RECORD_GAP_MS = 2;
export const BATCH_MAX_WAIT_MS = 5;
export const BATCH_MAX_ITEMS = 200;

const DEADLOCK_OR_SERIALIZATION = new Set(['40P01', '40001']);

export function createDeliveryBatches(
  knex: Knex,
  lockMs: number,
  lifecycle: DeliveryLifecycle,
): DeliveryBatches {
  const opts: BatcherOptions = {
    maxItems: BATCH_MAX_ITEMS,
    maxWaitMs: BATCH_MAX_WAIT_MS,
    maxRunning: BATCH_MAX_RUNNING,
    retries: 3,
    retryable: (err) =>
      DEADLOCK_OR_SERIALIZATION.has(String((err as { code?: unknown } | null)?.code)),
    shared: isTransientDbError,
  };
  const claim = new Batcher<ClaimRequest, ClaimedDelivery | undefined>(
    (requests) => lifecycle.claim(knex, requests, lockMs),
    opts,
  );
  const recordOpts: BatcherOptions = {
    ...opts,
    maxRunning: RECORD_MAX_RUNNING,
    gapMs: RECORD_GAP_MS,
  };
  const record = new Batcher<AttemptRecord, boolean>(async (records) => {
    // A delivery appears at most once per statement; a second record of the same one (two
    // claims of it, one lapsed) runs after the first.
    const seen = new Set<string>();
    const first: number[] = [];
    const later: number[] = [];
    records.forEach((r, i) => {
      (seen.has(r.delivery.id) ? later : first).push(i);
      seen.add(r.delivery.id);
    });
    const moved = new Array<boolean>(records.length).fill(false);
    const firstMoved = await lifecycle.record(
      knex,
      first.map((i) => records[i] as AttemptRecord),
    );
    first.forEach((i, k) => (moved[i] = firstMoved[k] ?? false));
    for (const i of later) {
      moved[i] = (await lifecycle.record(knex, [records[i] as AttemptRecord]))[0] ?? false;
    }
    return moved;
  }, recordOpts);
  return {
    lifecycle,
    claim: (request) => claim.add(request),
    record: (r) => record.add(r),
  };
}
