import request from 'supertest';
import {
  DeliveryLifecycle,
  type ClaimedDelivery,
  idTimeBoundsSql,
  idTimeWindow,
  newId,
  newTimeOrderedId,
  newTimeOrderedIdSql,
  timeOfId,
  type Knex,
} from '@switchboard/db';
import { emitMany } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { namesIn } from '../support/plans';
import { fanOut } from '../support/fan-out';
import { subscriber } from '../support/worker';

// Events and deliveries get ids that carry their created_at (UUIDv7 layout), so a lookup by
// id reads one day's partition instead of every day kept; ids made before still work.
let ctx: TestContext;
let knex: Knex;
const lifecycle = new DeliveryLifecycle();

beforeAll(async () => {
  ctx = await createTestContext();
  knex = ctx.deps.knex;
});
afterAll(async () => {
  await ctx?.close();
});

/** The partitions a lookup by `id` reads, from its plan (a literal: pruned when planned). */
async function partitionsRead(table: string, id: string): Promise<string[]> {
  const literal = `'${id}'`;
  const { rows } = (await knex.raw(
    `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${table} t
      WHERE t.id = ${literal} AND ${idTimeBoundsSql(literal, 't.created_at')}`,
  )) as { rows: Array<{ 'QUERY PLAN': unknown }> };
  return namesIn(rows[0]!['QUERY PLAN'], 'Relation Name');
}

const dayOf = (table: string, at: Date) =>
  `${table}_p${at.toISOString().slice(0, 10).replace(/-/g, '')}`;

/** A usage.threshold event's data: an event any subscription takes. */
const THRESHOLD = {
  threshold: 80 as const,
  minutes_used: 80,
  minutes_included: 100,
  billing_period_end: '2026-12-01T00:00:00.000Z',
};

/** `n` events of the tenant in one transaction: one created_at, ids increasing as emitted. */
const emitThresholds = (tenantId: string, n: number): Promise<string[]> =>
  knex.transaction((trx) =>
    emitMany(
      trx,
      Array.from({ length: n }, () => ({
        tenantId,
        type: 'usage.threshold' as const,
        data: THRESHOLD,
      })),
    ),
  );

/** One relay batch with room for every event of these tests; the tenant's deliveries made. */
async function relayOnce(tenantId: string): Promise<ClaimedDelivery[]> {
  const batch = await lifecycle.publishNext(knex, {
    after: '',
    otherRoom: 100,
    limit: 100,
    lockMs: 30_000,
  });
  return batch.made.filter((c) => c.delivery.tenantId === tenantId);
}

/** The event ids of a subscription's delivery log, as `GET /webhooks/{id}/deliveries` lists them. */
async function logged(auth: string, subscriptionId: string): Promise<string[]> {
  const log = await request(ctx.app)
    .get(`/api/v1/webhooks/${subscriptionId}/deliveries?limit=100`)
    .set('Authorization', auth);
  expect(log.status).toBe(200);
  return log.body.data.map((d: { event_id: string }) => d.event_id);
}

it('makes UUIDv7-shaped ids whose time reads back, and tells old ids apart', () => {
  const at = new Date('2026-11-26T03:50:12.345Z');
  const id = newTimeOrderedId('dlv', at);
  expect(id).toMatch(/^dlv_[0-9a-f]{12}7[0-9a-f]{19}$/);
  expect(id).toMatch(/^dlv_[A-Za-z0-9]{1,64}$/); // the API's path pattern
  expect(timeOfId(id)?.toISOString()).toBe(at.toISOString());
  expect(newTimeOrderedId('dlv', at)).not.toBe(id);
  const old = newId('dlv'); // random UUIDv4: nibble 4 where a time-ordered id has 7
  expect(timeOfId(old)).toBeNull();
  expect(idTimeWindow([old, id])).toEqual(['-infinity', 'infinity']);
  expect(idTimeWindow([id])).toEqual([
    new Date(at.getTime() - 1000),
    new Date(at.getTime() + 1000),
  ]);
});

it('an event and its deliveries carry their created_at, and a lookup by id reads one partition', async () => {
  const { tenantId } = await ctx.tenant(['admin']);
  const subscription = await ctx.deps.stores.webhookSubscriptions.createWithinLimit(
    {
      id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
      tenantId,
      url: 'https://127.0.0.1:9/hooks',
      events: [],
      description: null,
      secret: { ciphertext: 'x', keyId: 'k' },
    },
    100,
  );
  expect(subscription.kind).toBe('created');
  const eventId = (await emitThresholds(tenantId, 1))[0]!;
  const event = await ctx.deps.stores.events.get(eventId);
  expect(event?.id).toBe(eventId);
  expect(timeOfId(eventId)?.getTime()).toBe(event!.createdAt.getTime());

  const [open] = await fanOut(knex, [eventId]);
  expect(open?.id).toMatch(/^dlv_[0-9a-f]{12}7[0-9a-f]{19}$/);
  const delivery = await ctx.deps.stores.deliveries.get(knex, open!.id);
  // created_at is now() kept to the millisecond (rounded); the id has it floored.
  expect(
    Math.abs(timeOfId(open!.id)!.getTime() - delivery!.createdAt.getTime()),
  ).toBeLessThanOrEqual(1);

  // One partition, the row's day, out of the ten or so a fresh database has.
  expect(await partitionsRead('webhook_deliveries', open!.id)).toEqual([
    dayOf('webhook_deliveries', delivery!.createdAt),
  ]);
  expect(await partitionsRead('events', eventId)).toEqual([dayOf('events', event!.createdAt)]);
  // An id made before reads every partition, as it always did.
  const every = await partitionsRead('webhook_deliveries', newId('dlv'));
  expect(every.length).toBeGreaterThan(5);

  // The hot statements find the row through the bounds: claimed, then released.
  const [claimed] = await lifecycle.claim(
    knex,
    [{ deliveryId: open!.id, round: 1, attempt: 1 }],
    30_000,
  );
  expect(claimed?.delivery.id).toBe(open!.id);
  expect(claimed?.event.id).toBe(eventId);
  await lifecycle.release(knex, [open!.id], 0);
  expect((await ctx.deps.stores.deliveries.get(knex, open!.id))?.status).toBe('pending');
});

it("orders one statement's ids by the ordinal it gives them, and keeps their shape and time", async () => {
  const { rows } = (await knex.raw(
    `SELECT ${newTimeOrderedIdSql('dlv', 'g')} AS id, g, now() AS at
       FROM generate_series(1, 300) g`,
  )) as { rows: Array<{ id: string; g: number; at: Date }> };
  for (const r of rows) {
    expect(r.id).toMatch(/^dlv_[0-9a-f]{12}7[0-9a-f]{19}$/);
    expect(timeOfId(r.id)?.getTime()).toBe(Math.floor(r.at.getTime()));
  }
  // Sorted as `(created_at, id)` sorts them (one created_at): the order of the ordinals.
  const sorted = [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(sorted.map((r) => r.g)).toEqual(rows.map((r) => r.g).sort((a, b) => a - b));
  // Past the largest ordinal the rows share it; their ids stay distinct.
  const { rows: far } = (await knex.raw(
    `SELECT ${newTimeOrderedIdSql('evt', 'g')} AS id FROM generate_series(65535, 65537) g`,
  )) as { rows: Array<{ id: string }> };
  expect(far.map((r) => r.id.slice(17, 21))).toEqual(['ffff', 'ffff', 'ffff']);
  expect(new Set(far.map((r) => r.id)).size).toBe(3);
});

it("lists the relay's deliveries of one batch in their events' order, newest first", async () => {
  const sub = await subscriber(ctx, 'https://127.0.0.1:9/ordered');
  const { tenantId, auth } = sub.tenant;
  const eventIds = await emitThresholds(tenantId, 40);
  const made = await relayOnce(tenantId);
  // One statement made them all: one created_at, so only their ids can order them.
  expect(made.map((c) => c.delivery.eventId)).toEqual(eventIds);
  expect(await logged(auth, sub.subscription.id)).toEqual([...eventIds].reverse());
});

it('lists webhook.failing before webhook.disabled when one failure makes both', async () => {
  const sub = await subscriber(ctx, 'https://127.0.0.1:9/first');
  const { tenantId, auth } = sub.tenant;
  const more = await Promise.all(
    Array.from({ length: 7 }, (_, i) =>
      request(ctx.app)
        .post('/api/v1/webhooks')
        .set('Authorization', auth)
        .send({ url: `https://127.0.0.1:9/more-${i}` }),
    ),
  );
  const ids = [sub.subscription.id, ...more.map((r) => r.body.id as string)];
  const eventId = (await emitThresholds(tenantId, 1))[0]!;
  const open = await fanOut(knex, [eventId]);
  expect(open).toHaveLength(ids.length);
  const claimed = await lifecycle.claim(
    knex,
    open.map((d) => ({ deliveryId: d.id, round: 1, attempt: 1 })),
    30_000,
  );
  // A threshold of one: the first failure reaches the failing level and disables, in one
  // statement, for each of the eight subscriptions.
  for (const c of claimed) {
    const exhausted = await lifecycle.exhaust(
      knex,
      {
        delivery: c!.delivery,
        statusCode: 500,
        error: 'http_error',
        durationMs: 1,
        excerpt: null,
        logAttempt: true,
      },
      1,
    );
    expect(exhausted.disabledNow).toBe(true);
  }
  const listed = await request(ctx.app)
    .get('/api/v1/events?type=webhook.failing&type=webhook.disabled&limit=100')
    .set('Authorization', auth);
  expect(listed.status).toBe(200);
  const order = (listed.body.data as Array<{ event: string; data: { subscription_id: string } }>)
    .filter((e) => ids.includes(e.data.subscription_id))
    .map((e) => `${e.data.subscription_id} ${e.event}`);
  // Newest first: each subscription's webhook.disabled, then its webhook.failing.
  expect(order).toHaveLength(2 * ids.length);
  for (const id of ids) {
    expect(order.indexOf(`${id} webhook.disabled`)).toBe(
      order.indexOf(`${id} webhook.failing`) - 1,
    );
  }
});

it("lists a recovery's deliveries of missed events in the events' order", async () => {
  const sub = await subscriber(ctx, 'https://127.0.0.1:9/recovered');
  const { tenantId, auth } = sub.tenant;
  const id = sub.subscription.id;
  const since = new Date(Date.now() - 1000);
  // Disabled by failures: the relay makes it no delivery, and a recovery makes the missed ones.
  await knex('webhook_subscriptions').where({ id }).update({
    is_active: false,
    disabled_at: knex.fn.now(),
    disabled_reason: 'consecutive_failures',
  });
  const eventIds = await emitThresholds(tenantId, 30);
  expect(await relayOnce(tenantId)).toEqual([]);
  const started = await ctx.deps.stores.webhookRecoveries.start({
    tenantId,
    subscriptionId: id,
    since,
    until: new Date(Date.now() + 1000),
  });
  expect(started).toMatchObject({ kind: 'started' });
  expect(await logged(auth, id)).toEqual([...eventIds].reverse());
});
