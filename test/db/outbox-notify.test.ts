import { Client } from 'pg';
import { OUTBOX_CHANNEL } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { emitUsageEvents, tenantWithSubscriptions } from '../support/subscribed-events';
import { waitFor } from '../support/wait';

// The statement that writes events also wakes the relay (NOTIFY on the outbox channel), in
// the same round trip: once per committed transaction that put an event in the outbox, never
// for a transaction rolled back or for events with no target (stored already published).
// Notifications reach a listener in commit order, so "nothing for the earlier transaction"
// is read after a later one's notification has arrived.
let ctx: TestContext;
let listener: Client;
let heard = 0;

beforeAll(async () => {
  ctx = await createTestContext();
  listener = new Client({ connectionString: ctx.config.databaseUrl });
  await listener.connect();
  listener.on('notification', (n) => {
    if (n.channel === OUTBOX_CHANNEL) heard += 1;
  });
  await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
});
afterAll(async () => {
  await listener?.end();
  await ctx?.close();
});

/** Waits for the notification of `n` more transactions than already heard. */
async function heardMore(before: number, n: number): Promise<void> {
  await waitFor(`${n} outbox notification(s)`, () => heard >= before + n);
}

it('wakes the relay once per committed transaction with an event to relay, and only then', async () => {
  const { tenantId: targeted } = await tenantWithSubscriptions(ctx);
  const { tenantId: untargeted } = await ctx.tenant(['admin']);
  const before = heard;

  // No target: stored published, nothing to relay, no notification.
  await emitUsageEvents(ctx.deps.knex, untargeted, 2);
  // Rolled back: nothing committed, no notification.
  await ctx.deps.knex
    .transaction(async (trx) => {
      await emitUsageEvents(trx, targeted, 1);
      throw new Error('roll back');
    })
    .catch(() => undefined);
  // Three events in one transaction: one notification (Postgres folds the repeats).
  await emitUsageEvents(ctx.deps.knex, targeted, 3);

  await heardMore(before, 1);
  // A later transaction's notification arrives after any of the ones above would have.
  await emitUsageEvents(ctx.deps.knex, targeted, 1);
  await heardMore(before, 2);
  expect(heard - before).toBe(2);
});
