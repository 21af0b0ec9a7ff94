import request from 'supertest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { verifyWebhook } from '@switchboard/sdk';
import type {
  ReceivedRequest,
  TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import type { TestContext } from '../support/context';
import { startWebhookWorld, type WebhookWorld } from '../support/webhook-world';
import { emitCallStarted, subscriber, waitFor } from '../support/worker';

// Pause/resume, a URL change and a secret rotation with overlap, over real HTTPS.
let receiver: TestReceiver;
let base: string;
let ctx: TestContext;
let world: WebhookWorld;

beforeAll(async () => {
  const ok = (_req: unknown, res: import('node:http').ServerResponse) => res.writeHead(204).end();
  world = await startWebhookWorld(
    { '/a': ok, '/b': ok, '/c': ok, '/d': ok },
    { env: { WEBHOOK_TIMEOUT_MS: '2000' } },
  );
  ({ receiver, base, ctx } = world);
});
afterAll(() => world?.close());

const at = (path: string): ReceivedRequest[] => receiver.requests.filter((r) => r.path === path);
const patch = (auth: string, id: string, body: object) =>
  request(ctx.app).patch(`/api/v1/webhooks/${id}`).set('Authorization', auth).send(body);

describe('pause and resume', () => {
  it('holds deliveries while paused (not cancelled) and sends them on resume', async () => {
    const s = await subscriber(ctx, `${base}/a`);
    const auth = s.tenant.auth;
    expect((await patch(auth, s.subscription.id, { is_active: false })).status).toBe(200);
    for (let i = 0; i < 3; i++) await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
    // Positive signal that the worker saw them and let them wait: each was claimed and given
    // back unattempted, due well in the future.
    const rows = () =>
      ctx.deps.knex('webhook_deliveries').where({ subscription_id: s.subscription.id });
    await waitFor('the paused deliveries to be let wait', async () => {
      const r = await rows();
      return (
        r.length === 3 &&
        r.every((d) => d.status === 'pending' && d.next_attempt_at.getTime() > Date.now() + 60_000)
      );
    });
    expect(at('/a')).toHaveLength(0);
    expect(await ctx.deps.knex('webhook_delivery_attempts_all')).toHaveLength(0);
    const resumed = await patch(auth, s.subscription.id, { is_active: true });
    expect(resumed.body.is_active).toBe(true);
    await waitFor('3 deliveries after resume', () => at('/a').length === 3);
    await waitFor('all succeeded', async () =>
      (await rows()).every((d) => d.status === 'succeeded'),
    );
  });

  it('sends every attempt after a URL change to the new URL', async () => {
    const s = await subscriber(ctx, `${base}/b`);
    await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
    await waitFor('1 at /b', () => at('/b').length === 1);
    await patch(s.tenant.auth, s.subscription.id, { url: `${base}/c` });
    await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
    await waitFor('1 at /c', () => at('/c').length === 1);
    expect(at('/b')).toHaveLength(1);
  });
});

describe('rotation with overlap', () => {
  it('signs with both secrets, newest first; every verifier accepts either secret', async () => {
    const s = await subscriber(ctx, `${base}/d`);
    const oldSecret = s.subscription.signing_secret;
    const rotated = await request(ctx.app)
      .post(`/api/v1/webhooks/${s.subscription.id}/rotate-secret`)
      .set('Authorization', s.tenant.auth)
      .send({ overlap_seconds: 600 });
    const newSecret = rotated.body.signing_secret as string;
    await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
    await waitFor('1 at /d', () => at('/d').length === 1);
    const [delivery] = at('/d') as [ReceivedRequest];
    const headers = delivery.headers as Record<string, string>;
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(headers['x-service-signature']?.split(',')).toHaveLength(2);
    for (const secret of [newSecret, oldSecret]) {
      expect(verifyWebhook(delivery.body, headers, secret).event).toBe('call.started');
      const withoutService = { ...headers, 'x-service-signature': undefined };
      expect(verifyWebhook(delivery.body, withoutService, secret).event).toBe('call.started');
      expect(() => new StandardWebhook(secret).verify(delivery.body, headers)).not.toThrow();
      expect(() => new SvixWebhook(secret).verify(delivery.body, headers)).not.toThrow();
    }
    // Newest first: the first entry of each list is the new secret's.
    const first = {
      ...headers,
      'webhook-signature': headers['webhook-signature']?.split(' ')[0],
      'x-service-signature': headers['x-service-signature']?.split(',')[0],
    } as Record<string, string>;
    expect(() => verifyWebhook(delivery.body, first, newSecret)).not.toThrow();
    expect(() => verifyWebhook(delivery.body, first, oldSecret)).toThrow();

    // Overlap 0: the previous secret is gone, one signature per scheme.
    const again = await request(ctx.app)
      .post(`/api/v1/webhooks/${s.subscription.id}/rotate-secret`)
      .set('Authorization', s.tenant.auth)
      .send({ overlap_seconds: 0 });
    await emitCallStarted(ctx, s.tenant.tenantId, s.receptionistId);
    await waitFor('2 at /d', () => at('/d').length === 2);
    const later = at('/d')[1] as ReceivedRequest;
    const h = later.headers as Record<string, string>;
    expect(h['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(h['x-service-signature']?.split(',')).toHaveLength(1);
    expect(() => verifyWebhook(later.body, h, again.body.signing_secret)).not.toThrow();
    expect(() => verifyWebhook(later.body, h, newSecret)).toThrow();
    expect(() => new SvixWebhook(newSecret).verify(later.body, h)).toThrow();
  });
});
