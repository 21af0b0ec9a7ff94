import request from 'supertest';
import type {
  ReceivedRequest,
  TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// The delivery log: filters, the tenant-wide log, and one delivery in full (payload as
// signed, headers both ways, a 4 KiB NUL-safe excerpt), over real HTTPS.
let receiver: TestReceiver;
let base: string;
let ctx: TestContext;
let world: WebhookWorld;
const BIG = `a\u0000b${'x'.repeat(6000)}`;

beforeAll(async () => {
  world = await startWebhookWorld(
    {
      '/ok': (_req, res) => res.writeHead(200, { 'x-receiver': 'yes' }).end(BIG),
      // An empty body: no excerpt, but the headers are still recorded.
      '/down': (_req, res) => res.writeHead(503, { 'x-receiver': 'down' }).end(),
    },
    {
      env: {
        WEBHOOK_MAX_ATTEMPTS: '1',
        WEBHOOK_DISABLE_AFTER_FAILURES: '100',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    },
  );
  ({ receiver, base, ctx } = world);
});
afterAll(() => world?.close());

const get = (auth: string, path: string) =>
  request(ctx.app).get(`/api/v1${path}`).set('Authorization', auth);

describe('the delivery log', () => {
  it('filters by status, event, since/until and subscription; shows one delivery in full', async () => {
    const good = await subscriber(ctx, `${base}/ok`);
    const auth = good.tenant.auth;
    const bad = await request(ctx.app)
      .post('/api/v1/webhooks')
      .set('Authorization', auth)
      .send({ url: `${base}/down` });
    const badId = bad.body.id as string;
    const before = new Date(Date.now() - 1000).toISOString();
    await emitCallStarted(ctx, good.tenant.tenantId, good.receptionistId);
    const finals = async () =>
      ctx.deps.knex('webhook_deliveries').where({ tenant_id: good.tenant.tenantId });
    await waitFor('both deliveries final', async () => {
      const rows = await finals();
      return rows.length === 2 && rows.every((r) => ['succeeded', 'failed'].includes(r.status));
    });
    const after = new Date(Date.now() + 1000).toISOString();

    const goodId = good.subscription.id;
    const ok = await get(auth, `/webhooks/${goodId}/deliveries?status=succeeded`);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toHaveLength(1);
    expect(ok.body.data[0].subscription_id).toBe(goodId);
    expect((await get(auth, `/webhooks/${goodId}/deliveries?status=failed`)).body.data).toEqual([]);
    expect((await get(auth, `/webhooks/${goodId}/deliveries?event=call.ended`)).body.data).toEqual(
      [],
    );
    expect(
      (await get(auth, `/webhooks/${goodId}/deliveries?event=call.started&since=${before}`)).body
        .data,
    ).toHaveLength(1);
    expect((await get(auth, `/webhooks/${goodId}/deliveries?until=${before}`)).body.data).toEqual(
      [],
    );

    const all = await get(auth, '/webhook-deliveries');
    expect(all.status).toBe(200);
    expect(all.body.data.map((d: { subscription_id: string }) => d.subscription_id).sort()).toEqual(
      [goodId, badId].sort(),
    );
    const failed = await get(auth, `/webhook-deliveries?status=failed&until=${after}`);
    expect(failed.body.data.map((d: { subscription_id: string }) => d.subscription_id)).toEqual([
      badId,
    ]);
    const one = await get(auth, `/webhook-deliveries?subscription_id=${goodId}&status=succeeded`);
    expect(one.body.data).toHaveLength(1);
    const down = await get(auth, `/webhooks/${badId}/deliveries/${failed.body.data[0].id}`);
    expect(down.body.attempts[0]).toMatchObject({
      status_code: 503,
      response_excerpt: null,
      response_headers: expect.objectContaining({ 'x-receiver': 'down' }),
    });

    // One delivery in full.
    const id = ok.body.data[0].id as string;
    const detail = await get(auth, `/webhooks/${goodId}/deliveries/${id}`);
    expect(detail.status).toBe(200);
    const sent = receiver.requests.find((r) => r.path === '/ok') as ReceivedRequest;
    expect(JSON.stringify(detail.body.payload)).toBe(sent.body);
    expect(detail.body).toMatchObject({ id, subscription_id: goodId, event: 'call.started' });
    const [attempt] = detail.body.attempts;
    expect(attempt.request_headers['webhook-signature']).toBe(sent.headers['webhook-signature']);
    expect(attempt.request_headers['x-service-signature']).toBe(
      sent.headers['x-service-signature'],
    );
    expect(JSON.stringify(detail.body)).not.toContain(good.subscription.signing_secret);
    expect(attempt.response_headers['x-receiver']).toBe('yes');
    expect(attempt.status_code).toBe(200);
    expect(attempt.response_excerpt).toHaveLength(4096);
    expect(attempt.response_excerpt.startsWith('a\uFFFDb')).toBe(true);
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);

    // Another tenant sees none of it.
    const other = await ctx.tenant(['admin']);
    expect((await get(other.auth, `/webhooks/${goodId}/deliveries/${id}`)).status).toBe(404);
    expect(
      (await get(other.auth, `/webhook-deliveries?subscription_id=${goodId}`)).body.data,
    ).toEqual([]);
  });

  it('refuses bad filters with 400', async () => {
    const { auth } = await ctx.tenant(['admin']);
    for (const q of [
      'status=lost',
      'since=yesterday',
      'since=2026-11-21T10:00:00Z&until=2026-11-21T09:00:00Z',
      'subscription_id=nope',
    ]) {
      const res = await get(auth, `/webhook-deliveries?${q}`);
      expect([q, res.status, res.body.error?.type]).toEqual([q, 400, 'invalid_request_error']);
    }
  });
});
