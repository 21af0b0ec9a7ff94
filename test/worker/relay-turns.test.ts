import { insertEvents, newId } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { callStartedData, subscriber } from '../support/worker';

// The relay's claim takes tenants in turn (docs/decisions/0045-tenants-take-turns.md):
// each batch interleaves the tenants it serves, and beyond `maxTenants` tenants the next
// batch starts after the last one served, so every tenant is reached.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

it('claims unpublished events from every tenant in turn', async () => {
  const tenants: string[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await subscriber(ctx, 'https://127.0.0.1:9/hook');
    tenants.push(s.tenant.tenantId);
    await ctx.deps.knex.transaction((trx) =>
      insertEvents(
        trx,
        Array.from({ length: 4 }, () => ({
          id: newId('evt'),
          tenantId: s.tenant.tenantId,
          receptionistId: s.receptionistId,
          type: 'call.started',
          data: callStartedData(),
          createdAt: new Date(),
        })),
      ),
    );
  }
  const [a, b, c] = [...tenants].sort() as [string, string, string];
  const claim = (after: string) =>
    ctx.deps.knex.transaction(async (trx) => {
      const got = await ctx.deps.stores.events.claimUnpublished(trx, 6, { after, maxTenants: 2 });
      // What the relay's fan-out does to the events it claimed: they leave the outbox.
      await trx('event_outbox')
        .whereIn(
          'event_id',
          got.events.map((e) => e.id),
        )
        .delete();
      return { tenants: got.events.map((e) => e.tenantId), next: got.next };
    });

  const first = await claim('');
  expect(first).toEqual({ tenants: [a, b, a, b, a, b], next: b });
  // After b: c, then round again to a (c's three, a's last one), interleaved.
  const second = await claim(first.next);
  expect(second).toEqual({ tenants: [c, a, c, c], next: a });
  const third = await claim(second.next);
  expect(third).toEqual({ tenants: [b, c], next: c });
  expect((await claim(third.next)).tenants).toEqual([]);
});
