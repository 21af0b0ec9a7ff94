import { newTimeOrderedId } from '@switchboard/db';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// webhook_deliveries has no foreign keys (migration 090;
// docs/decisions/0076-no-foreign-keys-on-deliveries.md): the guarantees they gave are the
// application's, and are checked here.
let world: WebhookWorld;
let ctx: TestContext;

beforeAll(async () => {
  world = await startWebhookWorld({ '/hook': (_req, res) => void res.writeHead(204).end() });
  ({ ctx } = world);
}, 60_000);
afterAll(() => world?.close());

const hook = () => `${world.base}/hook`;
const deliveriesOf = (subscriptionId: string) =>
  ctx.deps.knex('webhook_deliveries').where({ subscription_id: subscriptionId });

it('creates no delivery for a subscription deleted before the fan-out', async () => {
  const s = await subscriber(ctx, hook());
  // The event is emitted while the subscription exists (it enters the outbox), and the
  // subscription is gone by the time the relay fans it out.
  const eventId = await ctx.deps.knex.transaction(async (trx) => {
    const id = await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId, trx);
    await trx('webhook_subscriptions').where({ id: s.subscription.id }).delete();
    return id;
  });
  await waitFor('the event to be fanned out', () => ctx.deps.stores.events.isFannedOut(eventId));
  expect(await ctx.deps.knex('webhook_deliveries').where({ event_id: eventId })).toHaveLength(0);
});

it('deletes the deliveries of a deleted subscription with it', async () => {
  const s = await subscriber(ctx, `${hook()}-never`);
  await ctx.deps.knex('webhook_subscriptions').where({ id: s.subscription.id }).update({
    is_active: false,
    disabled_reason: 'manual',
  });
  const eventId = await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
  await waitFor('the paused subscription to have its delivery', async () =>
    (await deliveriesOf(s.subscription.id)).length === 1 ? true : undefined,
  );
  expect(
    await ctx.deps.stores.webhookSubscriptions.delete(s.tenant.tenantId, s.subscription.id),
  ).toBe(true);
  expect(await deliveriesOf(s.subscription.id)).toHaveLength(0);
  expect(await ctx.deps.knex('events').where({ id: eventId })).toHaveLength(1);
});

it('cancels, never sends, a delivery whose subscription is gone', async () => {
  // What a fan-out that read the subscription before its deletion committed leaves behind.
  const s = await subscriber(ctx, hook());
  await ctx.deps.stores.webhookSubscriptions.delete(s.tenant.tenantId, s.subscription.id);
  const eventId = await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
  const id = newTimeOrderedId('dlv', new Date());
  await ctx.deps.knex('webhook_deliveries').insert({
    id,
    tenant_id: s.tenant.tenantId,
    event_id: eventId,
    subscription_id: s.subscription.id,
    next_attempt_at: new Date(),
  });
  // The reconciler finds it overdue and gives it a job; its claim finds no subscription.
  const row = await waitFor('the orphan delivery to be canceled', async () => {
    const r = await ctx.deps.knex('webhook_deliveries').where({ id }).first();
    return r?.status === 'canceled' ? r : undefined;
  });
  expect(row).toMatchObject({ attempts: 0 });
  expect(
    world.receiver.requests.filter((r) => r.headers['x-service-event-id'] === eventId),
  ).toEqual([]);
});
