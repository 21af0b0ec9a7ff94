import { insertEvents, newId } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { callStartedData, subscriber } from '../support/worker';

// The relay's batch takes tenants in turn (docs/decisions/0045-tenants-take-turns.md):
// it interleaves the tenants it serves, and beyond `maxTenants` tenants the next batch
// starts after the last one served, so every tenant is reached.
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
  // One relay batch: room for six deliveries, any tenant's (each event makes one).
  const claim = async (after: string) => {
    const got = await ctx.deps.stores.deliveryLifecycle.publishNext(ctx.deps.knex, {
      after,
      maxTenants: 2,
      otherRoom: 6,
      limit: 6,
      lockMs: 10_000,
    });
    return { tenants: got.made.map((d) => d.delivery.tenantId), next: got.next };
  };

  const first = await claim('');
  expect(first).toEqual({ tenants: [a, b, a, b, a, b], next: b });
  // After b: c, then round again to a (c's three, a's last one), interleaved.
  const second = await claim(first.next);
  expect(second).toEqual({ tenants: [c, a, c, c], next: a });
  const third = await claim(second.next);
  expect(third).toEqual({ tenants: [b, c], next: c });
  expect((await claim(third.next)).tenants).toEqual([]);
});
