import {
  DeliveryLifecycle,
  newTimeOrderedId,
  PARTITIONED_TABLES,
  partitionRanges,
  sweepPendingFloor,
  type Knex,
} from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { tenantWithSubscriptions } from '../support/subscribed-events';
import {
  addPastDays,
  captureStatements,
  emptyFloorDayOf,
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
  const { tenantId, subscriptionIds } = await tenantWithSubscriptions(ctx);
  const subscriptionId = subscriptionIds[0]!;
  // Dated before the history below, so that a recovery over it takes every event.
  await knex('webhook_subscriptions')
    .where({ id: subscriptionId })
    .update({ created_at: knex.raw(`now() - interval '30 days'`) });
  return { tenantId, subscriptionId };
}

/** The subscription's delivery ids in the log's order (newest first), read in one query. */
const newestFirst = async (subscriptionId: string): Promise<string[]> =>
  (await knex('webhook_deliveries')
    .where({ subscription_id: subscriptionId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .pluck('id')) as string[];

/** Every delivery id of the log, page after page (at most 20 pages). */
async function walkLog(subscriptionId: string, limit: number): Promise<string[]> {
  const walked: string[] = [];
  let after: { t: number; id: string } | null = null;
  for (let i = 0; i < 20; i++) {
    const page: Awaited<ReturnType<typeof ctx.deps.stores.deliveries.listForSubscription>> =
      await ctx.deps.stores.deliveries.listForSubscription(subscriptionId, { limit, after });
    walked.push(...page.rows.map((r) => r.id));
    after = page.next;
    if (!after) break;
  }
  return walked;
}

/**
 * `perDay` events, each with a succeeded delivery to the subscription, on each of the past
 * days and today (today's at the start of the day, so never after the statement's now()).
 */
async function seedDays(tenantId: string, subscriptionId: string, perDay: number): Promise<void> {
  // Ids that carry no time ('seed' is not hex): an md5 whose 13th digit is 7 would read as a
  // time-ordered id (UUIDv7 layout) of some random time, and a lookup by it would be bounded
  // to that time (1 id in 16).
  await knex.raw(
    `WITH rows AS (
       SELECT d, i, date_trunc('day', now()) - make_interval(days => d) + make_interval(mins => i)
                AS at
         FROM generate_series(0, ?::int) d, generate_series(1, ?::int) i)
     , ev AS (
       INSERT INTO events (id, tenant_id, type, data, created_at, published_at, fanned_out_at)
       SELECT 'evt_seed' || md5(? || d || '/' || i), ?, 'call.completed', '{}', at, at, at FROM rows)
     INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, status, attempts,
                                     created_at, updated_at, completed_at)
     SELECT 'dlv_seed' || md5(? || d || '/' || i), ?, 'evt_seed' || md5(? || d || '/' || i), ?,
            'succeeded', 1, at, at, at
       FROM rows`,
    [PAST_DAYS, perDay, tenantId, tenantId, tenantId, tenantId, tenantId, subscriptionId],
  );
}

/** The day partition `n` days before `day` (a partition's name). */
const dayBefore = (day: string, n: number): string => {
  const [, table, ymd] = /^(.*_p)(\d{8})$/.exec(day)!;
  const t = Date.parse(`${ymd!.slice(0, 4)}-${ymd!.slice(4, 6)}-${ymd!.slice(6)}`) - n * 86_400_000;
  return `${table}${new Date(t).toISOString().slice(0, 10).replace(/-/g, '')}`;
};

/** The partitions among `names` that hold days before `day`, or the archive. */
const olderDays = (names: string[], day: string): string[] =>
  names.filter((p) => p.endsWith('_archive') || (/_p\d{8}$/.test(p) && p < day));

const theStatement = (statements: Statement[], marker: RegExp): Statement => {
  const found = statements.filter((s) => marker.test(s.sql));
  expect(found).toHaveLength(1);
  return found[0]!;
};

/** The partitions of `table` a statement ran in (EXPLAIN ANALYZE: the pruned ones did not). */
async function ranIn(statement: Statement, table: string): Promise<string[]> {
  return partitionsOf(await planOf(knex, statement, true), table, true);
}

/** `table`'s day partition of `n` days before its first range day ("n" past days exist). */
const pastDay = (table: string, days: string[], n: number): string =>
  days[PAST_DAYS - n]!.replace('webhook_deliveries', table);

describe('the relay and the reconcilers', () => {
  it('read the events from the oldest pending one on, found by the sweep', async () => {
    const { tenantId } = await ctx.tenant(['admin']);
    const { events } = ctx.deps.stores;
    // One event 3 days old left pending by a version before the outbox table (both marks
    // NULL, no outbox row: the reconciler's to adopt), among fanned-out history.
    const old = `evt_old${tenantId}`;
    const day = (n: number) => pastDay('events', pastDeliveryDays, n);
    await knex('events').insert({
      id: old,
      tenant_id: tenantId,
      type: 'call.completed',
      data: {},
      created_at: knex.raw(
        `(SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid),
        'FROM \\(''([^'']+)''\\)'))[1]::timestamptz + interval '1 hour'
        FROM pg_class c WHERE c.relname = ?)`,
        [day(3)],
      ),
    });
    expect(await sweepPendingFloor(knex, 'events')).not.toBeNull();
    const adopt = (await captureStatements(() => events.adoptLegacy(0, 10))).at(0)!;
    // Moved into the outbox, where the relay claims it.
    expect(await events.pending([old])).toEqual(new Set([old]));
    await knex
      .transaction(async (trx) => {
        // The relay's batch takes it (its delivery, if it has a target; out of the outbox).
        await new DeliveryLifecycle().publishNext(trx, {
          after: '',
          otherRoom: 10,
          limit: 10,
          lockMs: 10_000,
        });
        expect(await trx('event_outbox').where({ event_id: old }).first()).toBeUndefined();
        throw new Error('rolled back');
      })
      .catch((err: Error) => {
        if (err.message !== 'rolled back') throw err;
      });
    const ran = await ranIn(adopt, 'events');
    // From the pending event's day on, not the days before it nor the archive.
    expect(ran).toContain(day(3));
    expect(ran.filter((p) => [day(5), day(4), 'events_archive'].includes(p))).toEqual([]);

    // Adopted (both marks set): the next sweep leaves every day before an hour ago out.
    await sweepPendingFloor(knex, 'events');
    const after = await ranIn(adopt, 'events');
    expect(after).toContain(todayOf('events'));
    expect(
      after.filter(
        (p) =>
          p === 'events_archive' || (p < emptyFloorDayOf('events') && p.startsWith('events_p')),
      ),
    ).toEqual([]);
  });

  it('read the deliveries from the oldest open one on, and a reopened old one lowers the floor', async () => {
    const { tenantId, subscriptionId } = await newSubscription();
    await seedDays(tenantId, subscriptionId, 2); // succeeded deliveries, today and past days
    const lifecycle = new DeliveryLifecycle();
    const day = (n: number) => pastDay('webhook_deliveries', pastDeliveryDays, n);
    const onDay = (n: number) =>
      knex('webhook_deliveries')
        .where({ subscription_id: subscriptionId })
        .andWhere(
          'created_at',
          '<',
          knex.raw(`date_trunc('day', now()) - make_interval(days => ?)`, [n - 1]),
        )
        .andWhere(
          'created_at',
          '>=',
          knex.raw(`date_trunc('day', now()) - make_interval(days => ?)`, [n]),
        )
        .first();
    const threeDaysOld = (await onDay(3))!;
    // Open again (a delivery whose retries span days): the oldest open row is 3 days old.
    await knex('webhook_deliveries')
      .where({ id: threeDaysOld.id })
      .update({
        status: 'pending',
        next_attempt_at: knex.raw(`now() - interval '1 minute'`),
      });
    await sweepPendingFloor(knex, 'webhook_deliveries');
    const overdue = theStatement(
      await captureStatements(() => lifecycle.overdue(knex, 0, 10)),
      /next_attempt_at < now\(\)/,
    );
    const lapsed = theStatement(
      await captureStatements(() => lifecycle.lapsed(knex, 10)),
      /locked_until < now\(\)/,
    );
    expect((await lifecycle.overdue(knex, 0, 10)).map((d) => d.id)).toContain(threeDaysOld.id);
    for (const statement of [overdue, lapsed]) {
      const ran = await ranIn(statement, 'webhook_deliveries');
      expect(ran).toContain(day(3));
      expect(ran.filter((p) => [day(4), 'webhook_deliveries_archive'].includes(p))).toEqual([]);
    }

    // Final again: the sweep raises the floor to an hour ago, past every older day.
    await knex('webhook_deliveries').where({ id: threeDaysOld.id }).update({ status: 'succeeded' });
    await sweepPendingFloor(knex, 'webhook_deliveries');
    for (const statement of [overdue, lapsed]) {
      const ran = await ranIn(statement, 'webhook_deliveries');
      expect(ran).toContain(todayOf('webhook_deliveries'));
      expect(
        ran.filter(
          (p) =>
            p === 'webhook_deliveries_archive' ||
            (p.startsWith('webhook_deliveries_p') && p < emptyFloorDayOf('webhook_deliveries')),
        ),
      ).toEqual([]);
    }

    // A manual retry reopens a 4-day-old delivery: its statement lowers the floor at once, so
    // the reconciler and the lapse check see it without waiting for a sweep.
    const fourDaysOld = (await onDay(4))!;
    expect(await lifecycle.newRound(knex, subscriptionId, fourDaysOld.id)).toBeDefined();
    await knex('webhook_deliveries')
      .where({ id: fourDaysOld.id })
      .update({ next_attempt_at: knex.raw(`now() - interval '1 minute'`) });
    expect((await lifecycle.overdue(knex, 0, 10)).map((d) => d.id)).toEqual([fourDaysOld.id]);
    expect(await ranIn(overdue, 'webhook_deliveries')).toContain(day(4));
    // Final again, for the tests after this one.
    await knex('webhook_deliveries').where({ id: fourDaysOld.id }).update({ status: 'succeeded' });
  });
});

describe('the delivery log page', () => {
  it('reads the newest days and stops, and lists every row in its place', async () => {
    const { tenantId, subscriptionId } = await newSubscription();
    await seedDays(tenantId, subscriptionId, 30);
    const statements = await captureStatements(() =>
      ctx.deps.stores.deliveries.listForSubscription(subscriptionId, { limit: 20 }),
    );
    const plan = await planOf(knex, theStatement(statements, /webhook_deliveries/), true);
    const ran = partitionsOf(plan, 'webhook_deliveries', true);
    // Today's day was read (the page is there), no past day was: the days are read newest
    // first and the reading stops once the page is full.
    expect(ran).toContain(todayOf('webhook_deliveries'));
    expect(ran.filter((p) => pastDeliveryDays.includes(p))).toEqual([]);
    expect(ran).not.toContain('webhook_deliveries_archive');
    // The page was full in the newest days, read first (from the day before today's on):
    // no day before them, nor the archive, was even planned; nor their events' days.
    const yesterday = dayBefore(todayOf('webhook_deliveries'), 1);
    expect(olderDays(partitionsOf(plan, 'webhook_deliveries'), yesterday)).toEqual([]);
    const twoDaysAgo = dayBefore(todayOf('events'), 2);
    expect(olderDays(partitionsOf(plan, 'events'), twoDaysAgo)).toEqual([]);

    // The page and the walk are those of one ORDER BY over the whole table.
    const expected = await newestFirst(subscriptionId);
    expect(expected).toHaveLength(30 * (PAST_DAYS + 1));
    expect(await walkLog(subscriptionId, 20)).toEqual(expected);
  });

  it('names the event of a delivery made over a day after it, read first or not', async () => {
    const { tenantId, subscriptionId } = await newSubscription();
    await seedDays(tenantId, subscriptionId, 30);
    const newest = (await knex('webhook_deliveries')
      .where({ subscription_id: subscriptionId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .first())!;
    // Its event three days older (a fan-out delayed that long), with a time-ordered id.
    const at = new Date(newest.created_at.getTime() - 3 * 86_400_000);
    const late = newTimeOrderedId('evt', at);
    await knex('events').insert({
      id: late,
      tenant_id: tenantId,
      type: 'call.started',
      data: {},
      created_at: at,
      published_at: at,
      fanned_out_at: at,
    });
    await knex('webhook_deliveries').where({ id: newest.id }).update({ event_id: late });
    const list = (event?: string) =>
      ctx.deps.stores.deliveries.listForSubscription(subscriptionId, { limit: 20 }, { event });
    const page = await list();
    expect(page.rows[0]).toMatchObject({ id: newest.id, eventId: late, eventType: 'call.started' });
    expect(page.rows.slice(1).map((r) => r.eventType)).toEqual(Array(19).fill('call.completed'));
    // Filtered by type (read over every day, as before): the same answer.
    expect((await list('call.started')).rows.map((r) => r.id)).toEqual([newest.id]);
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
      status: 'succeeded',
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

    const walked = await walkLog(subscriptionId, 5);
    expect(walked[0]).toBe(`dlv_ahead${tenantId}`);
    expect(walked[walked.length - 1]).toBe(`dlv_gap${tenantId}`);
    expect(walked).toEqual(await newestFirst(subscriptionId));
  });
});

describe('a recovery', () => {
  it('looks for existing deliveries from its since on, not in every day kept', async () => {
    const { tenantId, subscriptionId } = await newSubscription();
    await seedDays(tenantId, subscriptionId, 3);
    const since = new Date(Date.now() - 2 * 86_400_000);
    // One failed delivery of yesterday, resent by the recovery: its statement lowers the
    // deliveries' pending floor to it (the sweep had raised it to an hour ago).
    const failed = (await knex('webhook_deliveries')
      .where({ subscription_id: subscriptionId })
      .andWhere('created_at', '>=', since)
      .andWhere('created_at', '<', knex.raw(`date_trunc('day', now())`))
      .orderBy('created_at')
      .first())!;
    await knex('webhook_deliveries').where({ id: failed.id }).update({ status: 'failed' });
    await sweepPendingFloor(knex, 'webhook_deliveries');
    const floor = () =>
      knex('pending_floors').where({ table_name: 'webhook_deliveries' }).first('since');
    expect((await floor()).since.getTime()).toBeGreaterThan(failed.created_at.getTime());
    const statements = await captureStatements(() =>
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
    expect((await floor()).since.getTime()).toBeLessThanOrEqual(failed.created_at.getTime());
    // Every event of the window has its delivery already: nothing missed, nothing made.
    const missed = (
      await knex('webhook_deliveries')
        .where({ subscription_id: subscriptionId })
        .count<{ count: string }[]>('* as count')
    )[0]!.count;
    expect(Number(missed)).toBe(3 * (PAST_DAYS + 1));
  });
});
