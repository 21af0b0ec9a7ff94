import {
  createStores,
  DeliveryLifecycle,
  idTimeWindow,
  newId,
  newTimeOrderedId,
  type AttemptRecord,
  type Knex,
} from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { emitUsageEvents, tenantWithSubscriptions } from '../support/subscribed-events';
import {
  addPastDays,
  captureStatements,
  partitionsOf,
  planOf,
  type Statement,
} from '../support/plans';
import { fanOut } from '../support/fan-out';

// The worker's batch statements (fan-out, claim, record) name their rows by id. Besides each
// row's own bounds (joined, so pruned only while running), each bounds the partition key by
// the whole batch's window, as plain parameters: Postgres plans only the days the batch's ids
// carry, not every day kept (docs/decisions/0057-time-ordered-ids-and-bounded-statements.md).
// Checked on the statements the code sends, through their plans (planned with the values, as the
// code's are).
let ctx: TestContext;
let knex: Knex;
const lifecycle = new DeliveryLifecycle();
const PAST_DAYS = 5;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

beforeAll(async () => {
  ctx = await createTestContext();
  knex = ctx.deps.knex;
  for (const table of ['events', 'webhook_deliveries', 'webhook_delivery_attempts']) {
    await addPastDays(knex, table, PAST_DAYS);
  }
});
afterAll(async () => {
  await ctx?.close();
});

async function newSubscription(): Promise<{ tenantId: string; subscriptionId: string }> {
  const { tenantId, subscriptionIds } = await tenantWithSubscriptions(ctx);
  return { tenantId, subscriptionId: subscriptionIds[0]! };
}

/** The day partitions of `table` that [from, to) touches, oldest first. */
function daysOf(table: string, from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let t = Date.parse(from.toISOString().slice(0, 10)); t < to.getTime(); t += DAY) {
    days.push(`${table}_p${new Date(t).toISOString().slice(0, 10).replace(/-/g, '')}`);
  }
  return days;
}

/** The one statement `fn` sends whose text matches `marker`. */
async function statementOf(fn: () => Promise<unknown>, marker: RegExp): Promise<Statement> {
  const found = (await captureStatements(fn)).filter((s) => marker.test(s.sql));
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** The partitions of `table` planned for `s` (pruned when planned: absent). */
async function planned(s: Statement, table: string): Promise<string[]> {
  return partitionsOf(await planOf(knex, s, false), table);
}

const succeeded = (delivery: AttemptRecord['delivery']): AttemptRecord => ({
  delivery,
  statusCode: 200,
  error: null,
  durationMs: 5,
  excerpt: null,
  outcome: { kind: 'succeeded' },
  logAttempt: true,
});

it('claim and record plan only the days of their batch, among many days kept', async () => {
  const { tenantId, subscriptionId } = await newSubscription();
  const [eventId] = (await emitUsageEvents(knex, tenantId)) as [string];
  const opened = await fanOut(knex, [eventId]);
  expect(opened.map((d) => d.subscriptionId)).toEqual([subscriptionId]);
  const open = opened[0]!;

  const [from, to] = idTimeWindow([open.id]) as [Date, Date];
  let claimed: Awaited<ReturnType<DeliveryLifecycle['claim']>> = [];
  const claim = await statementOf(async () => {
    claimed = await lifecycle.claim(knex, [{ deliveryId: open.id, round: 1, attempt: 1 }], 30_000);
  }, /SET status = 'delivering'/);
  expect(claimed[0]?.event.id).toBe(eventId);
  expect(await planned(claim, 'webhook_deliveries')).toEqual(
    daysOf('webhook_deliveries', from, to),
  );
  // Its event: within a day before the delivery and an hour after.
  expect(await planned(claim, 'events')).toEqual(
    daysOf('events', new Date(from.getTime() - DAY), new Date(to.getTime() + HOUR)),
  );

  let moved: boolean[] = [];
  const record = await statementOf(async () => {
    moved = await lifecycle.record(knex, [succeeded(claimed[0]!.delivery)]);
  }, /INSERT INTO webhook_delivery_attempts/);
  expect(moved).toEqual([true]);
  expect(await planned(record, 'webhook_deliveries')).toEqual(
    daysOf('webhook_deliveries', from, to),
  );
  // The attempt is inserted (routed while running), never read.
  expect(await planned(record, 'webhook_delivery_attempts')).toEqual([]);
});

it('still find rows whose ids carry no time, and events over a day older than their delivery', async () => {
  const { tenantId, subscriptionId } = await newSubscription();
  const threeDaysAgo = new Date(Date.now() - 3 * DAY);
  const event = (id: string, at: Date) => ({
    id,
    tenant_id: tenantId,
    type: 'call.completed',
    data: {},
    created_at: at,
    published_at: at,
    fanned_out_at: at,
  });
  // A fan-out delayed over a day (a time-ordered delivery of an old event), and a delivery
  // and an event made before ids carried their time.
  const lateEvent = newTimeOrderedId('evt', threeDaysAgo);
  const oldEvent = newId('evt');
  await knex('events').insert([event(lateEvent, threeDaysAgo), event(oldEvent, threeDaysAgo)]);
  const now = new Date();
  const late = newTimeOrderedId('dlv', now);
  const old = newId('dlv');
  await knex('webhook_deliveries').insert(
    [
      [late, lateEvent],
      [old, oldEvent],
    ].map(([id, eventId]) => ({
      id,
      tenant_id: tenantId,
      event_id: eventId,
      subscription_id: subscriptionId,
      status: 'pending',
      next_attempt_at: now,
      created_at: now,
    })),
  );

  const claimed = await lifecycle.claim(
    knex,
    [late, old].map((deliveryId) => ({ deliveryId, round: 1, attempt: 1 })),
    30_000,
  );
  expect(claimed.map((c) => [c?.delivery.id, c?.event.id])).toEqual([
    [late, lateEvent],
    [old, oldEvent],
  ]);
  expect(claimed[0]?.event.createdAt.getTime()).toBe(threeDaysAgo.getTime());
  const moved = await lifecycle.record(
    knex,
    claimed.map((c) => succeeded(c!.delivery)),
  );
  expect(moved).toEqual([true, true]);
  const rows = (await knex('webhook_deliveries')
    .whereIn('id', [late, old])
    .orderBy('id')) as Array<{
    status: string;
  }>;
  expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
});

/** The planned partitions of `table` below the day of `from` (the archive included). */
const plannedBefore = (names: string[], table: string, from: Date): string[] => {
  const first = daysOf(table, from, new Date(from.getTime() + 1))[0]!;
  return names.filter((p) => p.endsWith('_archive') || (p.startsWith(`${table}_p`) && p < first));
};

it('the attempt readers plan only the days from their deliveries on, in both tables', async () => {
  // Every attempt is listed from both places it may be kept: the attempt rows and the
  // delivery row's latest attempt (migration 096). Each bounds both tables' partition keys.
  const { tenantId, subscriptionId } = await newSubscription();
  const [eventId] = (await emitUsageEvents(knex, tenantId)) as [string];
  const [open] = await fanOut(knex, [eventId]);
  const claim = async (attempt: number) =>
    (await lifecycle.claim(knex, [{ deliveryId: open!.id, round: 1, attempt }], 30_000))[0]!
      .delivery;
  const first = await claim(1);
  expect(
    await lifecycle.record(knex, [
      {
        ...succeeded(first),
        statusCode: 500,
        error: 'http_error',
        outcome: { kind: 'retry', nextAttemptAt: new Date() },
      },
    ]),
  ).toEqual([true]);
  expect(await lifecycle.record(knex, [succeeded(await claim(2))])).toEqual([true]);
  const stores = createStores(knex);

  let listed: Awaited<ReturnType<typeof stores.deliveryAttempts.forDeliveries>> = new Map();
  const log = await statementOf(async () => {
    listed = await stores.deliveryAttempts.forDeliveries([open!.id]);
  }, /webhook_delivery_attempts_all/);
  expect(listed.get(open!.id)?.map((a) => [a.attempt, a.statusCode])).toEqual([
    [1, 500],
    [2, 200],
  ]);
  const [from] = idTimeWindow([open!.id]) as [Date, Date];
  for (const table of ['webhook_deliveries', 'webhook_delivery_attempts']) {
    const names = await planned(log, table);
    expect(names).toContain(daysOf(table, from, new Date(from.getTime() + 1))[0]);
    expect(plannedBefore(names, table, from)).toEqual([]);
  }

  const since = new Date(Date.now() - HOUR);
  let stats: Awaited<ReturnType<typeof stores.webhookStats.forSubscription>> | undefined;
  const statements = (
    await captureStatements(async () => {
      stats = await stores.webhookStats.forSubscription(subscriptionId, since);
    })
  ).filter((st) => /percentile_cont/.test(st.sql));
  expect(statements).toHaveLength(2);
  // Both attempts' durations (5 ms each): the row's and the latest's.
  expect(stats).toMatchObject({ succeeded: 1, failed: 0, p50Ms: 5, p99Ms: 5 });
  for (const st of statements) {
    const deliveries = await planned(st, 'webhook_deliveries');
    expect(
      plannedBefore(deliveries, 'webhook_deliveries', new Date(since.getTime() - DAY)),
    ).toEqual([]);
    expect(
      plannedBefore(
        await planned(st, 'webhook_delivery_attempts'),
        'webhook_delivery_attempts',
        since,
      ),
    ).toEqual([]);
  }
});
