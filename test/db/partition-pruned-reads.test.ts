import { PARTITIONED_TABLES, partitionRanges, type Knex } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import {
  addPastDays,
  captureStatements,
  partitionsOf,
  planOf,
  todayOf,
  type Statement,
} from '../support/plans';

// The reads that used to touch every day kept read only the days they need: the delivery
// log page reads the newest days and stops, the recovery looks for existing deliveries from
// its `since` on. Each is checked on the statement the code sends, through its plan.
let ctx: TestContext;
let knex: Knex;
const PAST_DAYS = 5;
let pastDeliveryDays: string[];
const DELIVERIES = PARTITIONED_TABLES.find((t) => t.table === 'webhook_deliveries')!;

beforeAll(async () => {
  ctx = await createTestContext();
  knex = ctx.deps.knex;
  pastDeliveryDays = await addPastDays(knex, 'webhook_deliveries', PAST_DAYS);
  await addPastDays(knex, 'events', PAST_DAYS);
});
afterAll(async () => {
  await ctx?.close();
});

async function newSubscription(): Promise<{ tenantId: string; subscriptionId: string }> {
  const { tenantId } = await ctx.tenant(['admin']);
  const created = await ctx.deps.stores.webhookSubscriptions.createWithinLimit(
    {
      id: crypto.randomUUID(),
      tenantId,
      url: 'https://127.0.0.1:9/hooks',
      events: [],
      description: null,
      secret: { ciphertext: 'x', keyId: 'k' },
    },
    100,
  );
  if (created.kind !== 'created') throw new Error('subscription not created');
  // Dated before the history below, so that a recovery over it takes every event.
  await knex('webhook_subscriptions')
    .where({ id: created.subscription.id })
    .update({ created_at: knex.raw(`now() - interval '30 days'`) });
  return { tenantId, subscriptionId: created.subscription.id };
}

/**
 * `perDay` events, each with a succeeded delivery to the subscription, on each of the past
 * days and today (today's at the start of the day, so never after the statement's now()).
 */
async function seedDays(tenantId: string, subscriptionId: string, perDay: number): Promise<void> {
  await knex.raw(
    `WITH rows AS (
       SELECT d, i, date_trunc('day', now()) - make_interval(days => d) + make_interval(mins => i)
                AS at
         FROM generate_series(0, ?::int) d, generate_series(1, ?::int) i)
     , ev AS (
       INSERT INTO events (id, tenant_id, type, data, created_at, published_at, fanned_out_at)
       SELECT 'evt_' || md5(? || d || '/' || i), ?, 'call.completed', '{}', at, at, at FROM rows)
     INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, status, attempts,
                                     created_at, updated_at, completed_at)
     SELECT 'dlv_' || md5(? || d || '/' || i), ?, 'evt_' || md5(? || d || '/' || i), ?,
            'succeeded', 1, at, at, at
       FROM rows`,
    [PAST_DAYS, perDay, tenantId, tenantId, tenantId, tenantId, tenantId, subscriptionId],
  );
}

const theStatement = (statements: Statement[], marker: RegExp): Statement => {
  const found = statements.filter((s) => marker.test(s.sql));
  expect(found).toHaveLength(1);
  return found[0]!;
};

describe('the delivery log page', () => {
  it('reads the newest days and stops, and lists every row in its place', async () => {
    const { tenantId, subscriptionId } = await newSubscription();
    await seedDays(tenantId, subscriptionId, 30);
    const list = (after?: { t: number; id: string } | null) =>
      ctx.deps.stores.deliveries.listForSubscription(subscriptionId, { limit: 20, after });

    const statements = await captureStatements(knex, () => list());
    const plan = await planOf(knex, theStatement(statements, /webhook_deliveries/), true);
    const ran = partitionsOf(plan, 'webhook_deliveries', true);
    // Today's day was read (the page is there), no past day was: the days are read newest
    // first and the reading stops once the page is full.
    expect(ran).toContain(todayOf('webhook_deliveries'));
    expect(ran.filter((p) => pastDeliveryDays.includes(p))).toEqual([]);
    expect(ran).not.toContain('webhook_deliveries_archive');
    // Every past day is in the plan, in an ordered Append, not a merge of every day.
    expect(partitionsOf(plan, 'webhook_deliveries')).toEqual(
      expect.arrayContaining(pastDeliveryDays),
    );
    expect(plan.nodeTypes).toContain('Append');

    // The page and the walk are those of one ORDER BY over the whole table.
    const expected = (await knex('webhook_deliveries')
      .where({ subscription_id: subscriptionId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .pluck('id')) as string[];
    expect(expected).toHaveLength(30 * (PAST_DAYS + 1));
    const walked: string[] = [];
    let after: { t: number; id: string } | null = null;
    for (let i = 0; i < 20; i++) {
      const page: Awaited<ReturnType<typeof list>> = await list(after);
      walked.push(...page.rows.map((r) => r.id));
      after = page.next;
      if (!after) break;
    }
    expect(walked).toEqual(expected);
  });

  it('lists rows outside the daily ranges (the default partition) in their place', async () => {
    const { tenantId, subscriptionId } = await newSubscription();
    await seedDays(tenantId, subscriptionId, 2);
    // Retention dropped the oldest days (the archive and the first past day, as the
    // maintenance job does): a gap below the ranges, which the default partition covers.
    const ranges = await partitionRanges(knex, DELIVERIES);
    const oldest = ranges[1]!; // [0] is the archive
    for (const name of ['webhook_deliveries_archive', oldest.name]) {
      await knex.raw(`ALTER TABLE webhook_deliveries DETACH PARTITION ${name}`);
      await knex.raw(`DROP TABLE ${name}`);
    }
    // Rows in the default partition: one dated beyond the ranges made, one in the gap.
    const last = ranges[ranges.length - 1]!;
    const row = (id: string, at: Date) => ({
      id: `${id}${tenantId}`,
      tenant_id: tenantId,
      event_id: `evt_${id}`, // one delivery per (subscription, event)
      subscription_id: subscriptionId,
      created_at: at,
    });
    await knex('webhook_deliveries').insert([
      row('dlv_ahead', new Date(last.end.getTime() + 3_600_000)),
      row('dlv_gap', new Date(oldest.start!.getTime() + 3_600_000)),
    ]);
    const inDefault = (await knex('webhook_deliveries_default')
      .where({ subscription_id: subscriptionId })
      .orderBy('id')
      .pluck('id')) as string[];
    expect(inDefault).toEqual([`dlv_ahead${tenantId}`, `dlv_gap${tenantId}`]);

    const expected = (await knex('webhook_deliveries')
      .where({ subscription_id: subscriptionId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .pluck('id')) as string[];
    const walked: string[] = [];
    let after: { t: number; id: string } | null = null;
    for (let i = 0; i < 20; i++) {
      const page = await ctx.deps.stores.deliveries.listForSubscription(subscriptionId, {
        limit: 5,
        after,
      });
      walked.push(...page.rows.map((r) => r.id));
      after = page.next;
      if (!after) break;
    }
    expect(walked[0]).toBe(`dlv_ahead${tenantId}`);
    expect(walked[walked.length - 1]).toBe(`dlv_gap${tenantId}`);
    expect(walked).toEqual(expected);
  });
});

describe('a recovery', () => {
  it('looks for existing deliveries from its since on, not in every day kept', async () => {
    const { tenantId, subscriptionId } = await newSubscription();
    await seedDays(tenantId, subscriptionId, 3);
    const since = new Date(Date.now() - 2 * 86_400_000);
    const statements = await captureStatements(knex, () =>
      ctx.deps.stores.webhookRecoveries.start({
        tenantId,
        subscriptionId,
        since,
        until: new Date(),
      }),
    );
    const check = theStatement(statements, /NOT EXISTS \(SELECT 1 FROM webhook_deliveries d/);
    const plan = await planOf(knex, check, false);
    const read = partitionsOf(plan, 'webhook_deliveries');
    const sinceDay = `webhook_deliveries_p${new Date(since.getTime() - 3_600_000)
      .toISOString()
      .slice(0, 10)
      .replace(/-/g, '')}`;
    // The days before since's (and the archive) are pruned; since's day and later are read.
    expect(read).toContain(sinceDay);
    expect(read).toContain(todayOf('webhook_deliveries'));
    // (The default partition stays: it may hold any date beyond the ranges or in a gap.)
    const before = (table: string, day: string) =>
      partitionsOf(plan, table).filter((p) => p !== `${table}_default` && p < day);
    expect(before('webhook_deliveries', sinceDay)).toEqual([]);
    // The events are read from since's day on too.
    expect(before('events', sinceDay.replace('webhook_deliveries', 'events'))).toEqual([]);
    // Every event of the window has its delivery already: nothing missed, nothing made.
    const missed = (
      await knex('webhook_deliveries')
        .where({ subscription_id: subscriptionId })
        .count<{ count: string }[]>('* as count')
    )[0]!.count;
    expect(Number(missed)).toBe(3 * (PAST_DAYS + 1));
  });
});
