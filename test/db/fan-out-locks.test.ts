import type { Knex } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { emitUsageEvents, tenantWithSubscriptions } from '../support/subscribed-events';

// A fan-out writes one delivery per (event, subscription) in one transaction: the relay's
// batch of up to 500 events times the tenant's subscriptions (100 by default, up to 100,000).
// Each delivery used to take an advisory lock in the uniqueness trigger, held to the commit;
// Postgres keeps those in a lock table shared by every connection (64 per connection by
// default), so one large fan-out could fill it ("out of shared memory") and fail every
// transaction of the server. Its writers are already serialized on a row (the event's, or
// the subscription's for a recovery: migration 095, which took the lock out).
const EVENTS = 40;
const SUBSCRIPTIONS = 25;
let ctx: TestContext;
let knex: Knex;

beforeAll(async () => {
  ctx = await createTestContext();
  knex = ctx.deps.knex;
});
afterAll(async () => {
  await ctx?.close();
});

const advisoryLocksHeld = async (trx: Knex.Transaction): Promise<number> => {
  const { rows } = (await trx.raw(
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`,
  )) as { rows: Array<{ n: number }> };
  return rows[0]?.n ?? -1;
};

it('fans a batch out to every subscription without a lock per delivery, and never twice', async () => {
  const { tenantId } = await tenantWithSubscriptions(ctx, SUBSCRIPTIONS);
  const ids = await emitUsageEvents(knex, tenantId, EVENTS);

  // The relay's batch (DeliveryLifecycle.publishNext: the claim and the fan-out, one
  // statement), with room for all of it.
  const batch = (db: Knex) =>
    ctx.deps.stores.deliveryLifecycle.publishNext(db, {
      after: '',
      otherRoom: EVENTS * SUBSCRIPTIONS,
      limit: EVENTS * SUBSCRIPTIONS,
      lockMs: 60_000,
    });
  const first = await knex.transaction(async (trx) => {
    const { made } = await batch(trx);
    const events = new Set(made.map((c) => c.delivery.eventId));
    return { made: made.length, events, locks: await advisoryLocksHeld(trx) };
  });
  expect(first).toEqual({ made: EVENTS * SUBSCRIPTIONS, events: new Set(ids), locks: 0 });

  // Out of the outbox, the events make nothing again.
  expect((await batch(knex)).made).toEqual([]);
  const { rows } = (await knex.raw(
    `SELECT count(*)::int AS n, count(DISTINCT (event_id, subscription_id))::int AS pairs
       FROM webhook_deliveries WHERE tenant_id = ?`,
    [tenantId],
  )) as { rows: Array<{ n: number; pairs: number }> };
  expect(rows[0]).toEqual({ n: EVENTS * SUBSCRIPTIONS, pairs: EVENTS * SUBSCRIPTIONS });
});
