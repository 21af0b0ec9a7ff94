import {
  DeliveryLifecycle,
  idTimeBoundsSql,
  idTimeWindow,
  newId,
  newTimeOrderedId,
  timeOfId,
  type Knex,
} from '@switchboard/db';
import { emit } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { namesIn } from '../support/plans';
import { fanOut } from '../support/fan-out';

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
  const eventId = await knex.transaction((trx) =>
    emit(trx, {
      tenantId,
      type: 'usage.threshold',
      data: {
        threshold: 80,
        minutes_used: 80,
        minutes_included: 100,
        billing_period_end: '2026-12-01T00:00:00.000Z',
      },
    }),
  );
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
