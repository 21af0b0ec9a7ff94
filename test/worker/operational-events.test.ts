import request from 'supertest';
import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// webhook.failing / webhook.disabled / webhook.recovered over real HTTPS: a failing endpoint
// of a tenant and a second subscription of the same tenant listening for the three events.
// One attempt per delivery, so every event sent to the failing endpoint is one failure of
// the streak; the default threshold (20) puts the failing levels at 10 and 15.
const OPS = ['webhook.failing', 'webhook.disabled', 'webhook.recovered'];
let receiver: TestReceiver;
let base: string;
let ctx: TestContext;
let world: WebhookWorld;
let failing = true;

beforeAll(async () => {
  world = await startWebhookWorld(
    {
      '/down': (_req, res) => res.writeHead(failing ? 500 : 204).end(),
      '/ops': (_req, res) => res.writeHead(204).end(),
    },
    {
      env: {
        WEBHOOK_MAX_ATTEMPTS: '1',
        WEBHOOK_DISABLE_AFTER_FAILURES: '20',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    },
  );
  ({ receiver, base, ctx } = world);
});
afterAll(() => world?.close());

interface Envelope {
  id: string;
  event: string;
  receptionist_id?: string;
  data: Record<string, unknown>;
}
const bodies = (path: string): Envelope[] =>
  receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.body) as Envelope);

it('tells the other subscriptions, never the one concerned, at 10 and 15 failures, on disable and on recovery', async () => {
  // The failing one listens for every event (empty filter), its own included if fan-out let it.
  const s = await subscriber(ctx, `${base}/down`);
  const auth = s.tenant.auth;
  const down = s.subscription.id;
  const listener = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: `${base}/ops`, events: OPS });
  expect(listener.status).toBe(201);
  const ops = () => bodies('/ops');

  for (let i = 0; i < 20; i++) await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
  await waitFor('failing twice and disabled', () => ops().length === 3);
  // Their deliveries may arrive in any order: found by content, not position.
  const failingAt = (n: number) =>
    ops().find((b) => b.event === 'webhook.failing' && b.data.consecutive_failures === n);
  const [half, threeQuarters] = [failingAt(10), failingAt(15)];
  const disabled = ops().find((b) => b.event === 'webhook.disabled');
  expect(half).toMatchObject({
    event: 'webhook.failing',
    data: {
      subscription_id: down,
      url: `${base}/down`,
      consecutive_failures: 10,
      disable_threshold: 20,
      last_status_code: 500,
    },
  });
  expect(half?.receptionist_id).toBeUndefined();
  expect(threeQuarters).toMatchObject({
    event: 'webhook.failing',
    data: { subscription_id: down, consecutive_failures: 15 },
  });
  expect(disabled).toMatchObject({
    event: 'webhook.disabled',
    data: { subscription_id: down, reason: 'consecutive_failures', pending_cancelled: 0 },
  });
  const row = await ctx.deps.knex('webhook_subscriptions').where({ id: down }).first();
  expect(row).toMatchObject({ is_active: false, consecutive_failures: 20, failing_level: 2 });
  expect(new Date(String(disabled?.data.disabled_at)).getTime()).toBe(row.disabled_at.getTime());
  // The read shape's `failing` is for an active endpoint: a disabled one is not `failing`.
  const read = await request(ctx.app).get(`/api/v1/webhooks/${down}`).set('Authorization', auth);
  expect(read.body).toMatchObject({ is_active: false, consecutive_failures: 20, failing: false });

  // Re-enabled and answering again: the first success reports the recovery.
  failing = false;
  const patch = (body: object) =>
    request(ctx.app).patch(`/api/v1/webhooks/${down}`).set('Authorization', auth).send(body);
  // The failing level stays (for webhook.recovered) but the zeroed streak is not `failing`.
  const enabled = await patch({ is_active: true });
  expect(enabled.status).toBe(200);
  expect(enabled.body).toMatchObject({ is_active: true, consecutive_failures: 0, failing: false });
  await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
  await waitFor('webhook.recovered', () => ops().length === 4);
  expect(ops()[3]).toMatchObject({
    event: 'webhook.recovered',
    data: { subscription_id: down, url: `${base}/down`, failures_before: 0 },
  });
  expect(
    (await ctx.deps.knex('webhook_subscriptions').where({ id: down }).first()).failing_level,
  ).toBe(0);

  // A pause by the tenant is a disable too (reason manual, nothing cancelled).
  expect((await patch({ is_active: false })).status).toBe(200);
  await waitFor('webhook.disabled (manual)', () => ops().length === 5);
  expect(ops()[4]).toMatchObject({
    event: 'webhook.disabled',
    data: { subscription_id: down, reason: 'manual', pending_cancelled: 0 },
  });
  // Pausing a paused subscription reports nothing more: a later event is the next one here.
  expect((await patch({ is_active: false })).status).toBe(200);
  expect((await patch({ is_active: true })).status).toBe(200);
  await request(ctx.app)
    .patch(`/api/v1/webhooks/${listener.body.id as string}`)
    .set('Authorization', auth)
    .send({ is_active: false });
  await waitFor('the listener paused reported to the other subscription', () =>
    bodies('/down').some((b) => b.event === 'webhook.disabled'),
  );
  expect(ops()).toHaveLength(5);

  // The endpoint concerned never received an event about itself, and every operational
  // event went to the listener exactly once.
  const own = bodies('/down').filter((b) => OPS.includes(b.event));
  expect(own.map((b) => b.data.subscription_id)).toEqual([listener.body.id]);
  expect(new Set(ops().map((b) => b.id)).size).toBe(5);
  const deliveries = await ctx.deps
    .knex('webhook_deliveries as d')
    .join('events as e', 'e.id', 'd.event_id')
    .whereIn('e.type', OPS)
    .select('d.subscription_id', 'e.data');
  for (const d of deliveries) {
    expect(d.subscription_id).not.toBe((d.data as { subscription_id: string }).subscription_id);
  }
});
