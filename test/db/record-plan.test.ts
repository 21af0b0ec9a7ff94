import {
  DeliveryLifecycle,
  type AttemptRecord,
  type ClaimedDelivery,
  type Knex,
} from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { captureStatements, planOf, type Plan, type Statement } from '../support/plans';
import { emitUsageEvents, tenantWithSubscriptions } from '../support/subscribed-events';
import { fanOut } from '../support/fan-out';

// The attempt record (RECORD_SQL) reads a delivery's previous latest attempt besides its
// update only when there can be one: never for the first attempt of round 1, the common case
// (packages/db/src/stores/delivery-lifecycle-sql.ts;
// docs/decisions/0077-latest-attempt-on-the-delivery-row.md). Checked on the statement the code
// sends, through its plan run with its values.
let ctx: TestContext;
let knex: Knex;
const lifecycle = new DeliveryLifecycle();
const LOCK_MS = 30_000;
const SUBSCRIPTIONS = 5;
const EVENTS = 10;
const BATCH = SUBSCRIPTIONS * EVENTS;

beforeAll(async () => {
  ctx = await createTestContext();
  knex = ctx.deps.knex;
});
afterAll(async () => {
  await ctx?.close();
});

const record = (
  delivery: ClaimedDelivery['delivery'],
  outcome: AttemptRecord['outcome'],
): AttemptRecord => ({
  delivery,
  statusCode: outcome.kind === 'succeeded' ? 200 : 500,
  error: outcome.kind === 'succeeded' ? null : 'http_error',
  durationMs: 5,
  excerpt: null,
  outcome,
  logAttempt: true,
});
const succeeded = { kind: 'succeeded' } as const;
const retry = (): AttemptRecord['outcome'] => ({ kind: 'retry', nextAttemptAt: new Date() });

async function claim(ids: readonly string[], attempt: number): Promise<ClaimedDelivery[]> {
  const claimed = await lifecycle.claim(
    knex,
    ids.map((deliveryId) => ({ deliveryId, round: 1, attempt })),
    LOCK_MS,
  );
  expect(claimed.every(Boolean)).toBe(true);
  return claimed as ClaimedDelivery[];
}

/** The record statement for `records`, as the code sends it, without running it. */
async function recordStatement(records: AttemptRecord[]): Promise<Statement> {
  let sent: Statement[] = [];
  const rollback = new Error('rollback');
  await expect(
    knex.transaction(async (trx) => {
      sent = await captureStatements(() => lifecycle.record(trx, records));
      throw rollback;
    }),
  ).rejects.toBe(rollback);
  const found = sent.filter((s) => /INSERT INTO webhook_delivery_attempts/.test(s.sql));
  expect(found).toHaveLength(1);
  return found[0]!;
}

/**
 * The scans of delivery rows that ran, as how often each ran: each is the update's read of
 * its rows (one scan, or one index lookup per delivery) or the lookup of a previous latest.
 */
const deliveryScans = (plan: Plan): number[] =>
  plan.scans
    .filter((s) => s.relation.startsWith('webhook_deliveries_') && (s.loops ?? 0) > 0)
    .map((s) => s.loops!);

it('a first attempt reads its delivery once; a later one still lists the attempt it supersedes', async () => {
  const { tenantId } = await tenantWithSubscriptions(ctx, SUBSCRIPTIONS);
  const open = await fanOut(knex, await emitUsageEvents(knex, tenantId, EVENTS));
  expect(open).toHaveLength(BATCH);
  const ids = open.map((d) => d.id);
  const first = await claim(ids, 1);

  // Round 1, attempt 1: the update's own read of each row (one scan, or one index lookup per
  // delivery), and no second lookup for a previous latest attempt (there is none).
  const firstPlan = await planOf(
    knex,
    await recordStatement(first.map((c) => record(c.delivery, succeeded))),
    true,
  );
  expect(deliveryScans(firstPlan)).toHaveLength(1);
  expect(deliveryScans(firstPlan)[0]).toBeLessThanOrEqual(BATCH);

  // Half retried: their second attempt supersedes the first, which becomes a row; the other
  // half's first attempt supersedes nothing. One batch of both.
  const half = BATCH / 2;
  expect(
    await lifecycle.record(
      knex,
      first.slice(0, half).map((c) => record(c.delivery, retry())),
    ),
  ).toEqual(Array.from({ length: half }, () => true));
  const second = await claim(ids.slice(0, half), 2);
  const mixed = [
    ...second.map((c) => record(c.delivery, succeeded)),
    ...first.slice(half).map((c) => record(c.delivery, succeeded)),
  ];
  // Each second attempt's delivery, and only those, is looked up for its latest as well.
  const mixedPlan = await planOf(knex, await recordStatement(mixed), true);
  expect(deliveryScans(mixedPlan)).toHaveLength(2);
  expect(deliveryScans(mixedPlan)).toContain(half);

  expect(await lifecycle.record(knex, mixed)).toEqual(Array.from({ length: BATCH }, () => true));
  const rows = (await knex('webhook_delivery_attempts')
    .whereIn('delivery_id', ids)
    .select('delivery_id', 'round', 'attempt', 'status_code')) as Array<{
    delivery_id: string;
    round: number;
    attempt: number;
    status_code: number;
  }>;
  expect(rows.map((r) => r.delivery_id).sort()).toEqual(ids.slice(0, half).sort());
  expect(rows.every((r) => r.round === 1 && r.attempt === 1 && r.status_code === 500)).toBe(true);
  const latest = (await knex('webhook_deliveries')
    .whereIn('id', ids)
    .select('id', 'status', 'attempts', 'latest_round', 'latest_attempt')) as Array<{
    id: string;
    status: string;
    attempts: number;
    latest_round: number;
    latest_attempt: number;
  }>;
  const retried = new Set(ids.slice(0, half));
  for (const d of latest) {
    const attempts = retried.has(d.id) ? 2 : 1;
    expect(d).toMatchObject({
      status: 'succeeded',
      attempts,
      latest_round: 1,
      latest_attempt: attempts,
    });
  }
});
