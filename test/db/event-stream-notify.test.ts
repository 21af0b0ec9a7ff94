import { createTestContext, type TestContext } from '../support/context';
import { listenToStreamNotifications } from '../support/stream-notifications';
import { emitUsageEvents } from '../support/subscribed-events';
import { waitFor } from '../support/wait';

// Leases of open event streams (event_streams) and the NOTIFY they turn on: the statement
// that writes events notifies the streams' channel with the tenant's id, once per committed
// transaction, only while the tenant has a live lease. Notifications reach a listener in
// commit order, so "nothing for the earlier transaction" is read once a later one's arrived.
let ctx: TestContext;
let notifications: Awaited<ReturnType<typeof listenToStreamNotifications>>;
let heard: string[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  notifications = await listenToStreamNotifications(ctx.config.databaseUrl);
  heard = notifications.heard;
});
afterAll(async () => {
  await notifications?.end();
  await ctx?.close();
});

const TTL_MS = 60_000;

it('notifies a streamed tenant once per transaction, and nobody else', async () => {
  const { eventStreams } = ctx.deps.stores;
  const streamed = await ctx.tenant(['read']);
  const quiet = await ctx.tenant(['read']);
  const lapsed = await ctx.tenant(['read']);
  const key = await ctx.keyFor(streamed.tenantId, ['read']);
  const lease = await eventStreams.open(streamed.tenantId, key.id, 5, TTL_MS);
  expect(lease.kind).toBe('opened');
  const lapsedKey = await ctx.keyFor(lapsed.tenantId, ['read']);
  await eventStreams.open(lapsed.tenantId, lapsedKey.id, 5, TTL_MS);
  await ctx.deps
    .knex('event_streams')
    .where({ tenant_id: lapsed.tenantId })
    .update({
      expires_at: new Date(Date.now() - 1000),
    });
  const from = heard.length;

  await emitUsageEvents(ctx.deps.knex, quiet.tenantId, 2);
  await emitUsageEvents(ctx.deps.knex, lapsed.tenantId, 1);
  await emitUsageEvents(ctx.deps.knex, streamed.tenantId, 3); // one transaction: one NOTIFY
  await waitFor('the streamed tenant notified', () => heard.length > from);
  await emitUsageEvents(ctx.deps.knex, streamed.tenantId, 1);
  await waitFor('the second transaction', () => heard.length >= from + 2);
  expect(heard.slice(from)).toEqual([streamed.tenantId, streamed.tenantId]);

  // Closed: the tenant's events notify nobody again.
  if (lease.kind === 'opened') await eventStreams.close(lease.id);
  await emitUsageEvents(ctx.deps.knex, streamed.tenantId, 1);
  const other = await ctx.tenant(['read']);
  const otherKey = await ctx.keyFor(other.tenantId, ['read']);
  await eventStreams.open(other.tenantId, otherKey.id, 5, TTL_MS);
  await emitUsageEvents(ctx.deps.knex, other.tenantId, 1);
  await waitFor('the other tenant notified', () => heard.includes(other.tenantId));
  expect(heard.slice(from + 2)).toEqual([other.tenantId]);
});

it('counts a key’s live leases against its limit, and ends the streams of a revoked key', async () => {
  const { eventStreams } = ctx.deps.stores;
  const t = await ctx.tenant(['read']);
  const key = await ctx.keyFor(t.tenantId, ['read']);
  const opened = await Promise.all(
    Array.from({ length: 4 }, () => eventStreams.open(t.tenantId, key.id, 3, TTL_MS)),
  );
  // Taken at once, yet never more than 3.
  expect(opened.map((o) => o.kind).sort()).toEqual(['limit', 'opened', 'opened', 'opened']);
  const ids = opened.flatMap((o) => (o.kind === 'opened' ? [o.id] : []));
  const streams = ids.map((id) => ({ id, tenantId: t.tenantId, keyId: key.id }));
  // A lapsed lease no longer counts.
  await ctx.deps
    .knex('event_streams')
    .where({ id: ids[0] })
    .update({ expires_at: new Date(0) });
  expect((await eventStreams.open(t.tenantId, key.id, 3, TTL_MS)).kind).toBe('opened');
  expect((await eventStreams.open(t.tenantId, key.id, 3, TTL_MS)).kind).toBe('limit');

  expect(await eventStreams.renew(streams, TTL_MS)).toEqual([]);
  await ctx.deps.stores.apiKeys.revoke(key.id);
  expect((await eventStreams.renew(streams, TTL_MS)).sort()).toEqual([...ids].sort());
});
