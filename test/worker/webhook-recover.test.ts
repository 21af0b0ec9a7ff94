import request from 'supertest';
import type { TestReceiver } from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// Recover: an outage of the receiver (failed deliveries) and a disabled spell (missed
// events) are both sent again, once each, with the same event ids.
let receiver: TestReceiver;
let base: string;
let ctx: TestContext;
let world: WebhookWorld;
let up = false;
/** While set, the receiver's answers wait for it: a recovery stays in progress meanwhile. */
let gate: Promise<void> | null = null;

beforeAll(async () => {
  world = await startWebhookWorld(
    {
      '/r': (_req, res) => {
        const answer = () => res.writeHead(up ? 200 : 503).end();
        if (gate) void gate.then(answer);
        else answer();
      },
    },
    {
      env: {
        WEBHOOK_MAX_ATTEMPTS: '1',
        WEBHOOK_DISABLE_AFTER_FAILURES: '2',
        // Longer than the gate below is ever closed, however busy the machine.
        WEBHOOK_TIMEOUT_MS: '30000',
        DELIVERY_RETENTION_DAYS: '30',
      },
    },
  );
  ({ receiver, base, ctx } = world);
});
afterAll(() => world?.close());

describe('POST /webhooks/{id}/recover', () => {
  it('resends failed and cancelled deliveries and sends missed events, once each', async () => {
    const s = await subscriber(ctx, `${base}/r`);
    const { auth, tenantId } = s.tenant;
    const id = s.subscription.id;
    const since = new Date(Date.now() - 1000).toISOString();
    const post = (body: object) =>
      request(ctx.app).post(`/api/v1/webhooks/${id}/recover`).set('Authorization', auth).send(body);
    // Two failures disable the subscription; a third event is missed while disabled.
    await emitCallStarted(ctx, tenantId, s.receptionistId);
    await emitCallStarted(ctx, tenantId, s.receptionistId);
    const sub = () => ctx.deps.knex('webhook_subscriptions').where({ id }).first();
    await waitFor('auto-disable', async () => (await sub()).is_active === false);
    const missed = await emitCallStarted(ctx, tenantId, s.receptionistId);
    await waitFor('the missed event fanned out', () => ctx.deps.stores.events.isFannedOut(missed));
    const disabled = await post({ since });
    expect([disabled.status, disabled.body.error?.code]).toEqual([409, 'subscription_disabled']);

    up = true;
    await request(ctx.app).patch(`/api/v1/webhooks/${id}`).set('Authorization', auth).send({
      is_active: true,
    });
    const before = receiver.requests.length;
    // The receiver holds its answers until the second request below was refused: the
    // recovery is in progress then, however fast the worker resends.
    let open = (): void => undefined;
    gate = new Promise<void>((resolve) => (open = resolve));
    const started = await post({ since });
    expect(started.status).toBe(202);
    expect(started.headers.location).toBe(`/api/v1/webhooks/${id}/recoveries/${started.body.id}`);
    expect(started.body).toMatchObject({ subscription_id: id, found: 3 });
    const again = await post({ since });
    expect([again.status, again.body.error?.code]).toEqual([409, 'recovery_in_progress']);
    gate = null;
    open();

    const location = String(started.headers.location);
    const read = () => request(ctx.app).get(location).set('Authorization', auth);
    await waitFor(
      'the recovery to complete',
      async () => (await read()).body.status === 'completed',
    );
    expect((await read()).body).toMatchObject({ found: 3, queued: 0, delivered: 3, failed: 0 });
    const resent = receiver.requests.slice(before).filter((r) => r.path === '/r');
    expect(resent).toHaveLength(3);
    const ids = resent.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(3);
    expect(ids).toContain(missed);

    // Nothing left to recover: a new recovery finds nothing and is completed at once.
    const empty = await post({ since });
    expect(empty.body).toMatchObject({ found: 0, status: 'completed' });
  });

  it('refuses a since beyond retention, until before since, and unknown subscriptions', async () => {
    const s = await subscriber(ctx, `${base}/r`);
    const post = (id: string, body: object) =>
      request(ctx.app)
        .post(`/api/v1/webhooks/${id}/recover`)
        .set('Authorization', s.tenant.auth)
        .send(body);
    const old = await post(s.subscription.id, {
      since: new Date(Date.now() - 31 * 86_400_000).toISOString(),
    });
    expect([old.status, old.body.error?.param]).toEqual([400, 'since']);
    expect(old.body.error.message).toMatch(/\d{4}-\d{2}-\d{2}T/);
    const backwards = await post(s.subscription.id, {
      since: '2026-11-20T10:00:00Z',
      until: '2026-11-20T09:00:00Z',
    });
    expect(backwards.status).toBe(400);
    const gone = await post('6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b', {
      since: new Date().toISOString(),
    });
    expect(gone.status).toBe(404);
  });
});
