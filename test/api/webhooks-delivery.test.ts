import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '@switchboard/sdk';
import {
  closedPort,
  generateCertificate,
  startReceiver,
  type TestCertificate,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext, type TestContext } from '../support/context';
import { baselineMs, boundMs } from '../support/timing';
import { captureLogger, fakeLookup, ISO_MS, verifyBothSchemes } from '../support/webhooks';

// POST /webhooks/{id}/test over real HTTPS to a receiver on 127.0.0.1 with a self-signed
// certificate, trusted through the sender's `ca`. No traffic leaves the machine.
let certificate: TestCertificate;
let receiver: TestReceiver;
let base: string;
let ctx: TestContext;
let slowCtx: TestContext;
const logs = captureLogger();
const timers = new Set<NodeJS.Timeout>();
// 'wrong-name.test' resolves to the receiver, whose certificate does not name it.
const lookup = fakeLookup({ 'wrong-name.test': ['127.0.0.1'] });

beforeAll(async () => {
  certificate = generateCertificate('IP:127.0.0.1,DNS:localhost');
  receiver = await startReceiver(certificate, {
    '/ok': (_req, res) => res.writeHead(204).end(),
    '/fail': (_req, res) => res.writeHead(500).end('boom'),
    '/redirect': (_req, res) => res.writeHead(302, { location: `${base}/ok` }).end(),
    '/slow': (_req, res) => {
      const timer = setTimeout(() => res.writeHead(200).end('late'), 3000);
      timers.add(timer);
      res.on('close', () => clearTimeout(timer));
    },
  });
  base = `https://127.0.0.1:${receiver.port}`;
  const overrides = { webhookCa: certificate.cert, webhookLookup: lookup };
  ctx = await createTestContext({}, { ...overrides, logger: logs.logger });
  // A timeout long enough for a TLS handshake on a loaded machine, far below the answer's 3 s.
  slowCtx = await createTestContext({ WEBHOOK_TIMEOUT_MS: '1000' }, overrides);
});
beforeEach(() => {
  receiver.requests.length = 0;
});
afterAll(async () => {
  timers.forEach((t) => clearTimeout(t));
  await Promise.all([ctx?.close(), slowCtx?.close(), receiver?.close()]);
});

/** The ten-line verifier of docs/webhooks.md (same logic, typed). */
function verifySwitchboard(rawBody: string, headers: IncomingHttpHeaders, secret: string) {
  const ts = headers['x-service-timestamp'];
  const sig = headers['x-service-signature'];
  if (typeof ts !== 'string' || typeof sig !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${ts}.${rawBody}`).digest('hex');
  const a = Buffer.from(expected, 'hex');
  const b = Buffer.from(sig, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

async function subscribe(on: TestContext, url: string) {
  const { auth } = await on.tenant(['admin']);
  const res = await request(on.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url });
  expect(res.status).toBe(201);
  return { auth, id: res.body.id as string, secret: res.body.signing_secret as string };
}

const sendTest = (on: TestContext, sub: { auth: string; id: string }) =>
  request(on.app).post(`/api/v1/webhooks/${sub.id}/test`).set('Authorization', sub.auth);

const row = (on: TestContext, id: string) =>
  on.deps.knex('webhook_subscriptions').where({ id }).first();

describe('a successful test delivery', () => {
  it('answers the test result and sends one request signed with both schemes', async () => {
    const sub = await subscribe(ctx, `${base}/ok`);
    const before = await row(ctx, sub.id);
    const res = await sendTest(ctx, sub);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'delivered',
        'error',
        'event_id',
        'payload',
        'signature_header',
        'status_code',
        'subscription_id',
        'timestamp_header',
      ].sort(),
    );
    expect(res.body).toMatchObject({
      subscription_id: sub.id,
      delivered: true,
      status_code: 204,
      error: null,
      signature_header: 'x-service-signature',
      timestamp_header: 'x-service-timestamp',
    });
    expect(res.body.event_id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(res.body.payload).toEqual({
      id: res.body.event_id,
      type: 'webhook.test',
      event: 'webhook.test',
      data: { subscription_id: sub.id, message: expect.any(String) },
      timestamp: expect.stringMatching(ISO_MS),
      livemode: true,
    });

    expect(receiver.requests).toHaveLength(1);
    const [received] = receiver.requests;
    if (!received) throw new Error('no request');
    expect(received).toMatchObject({ method: 'POST', path: '/ok' });
    expect(JSON.parse(received.body)).toEqual(res.body.payload);
    expect(received.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Switchboard-Webhooks/1',
      'x-service-event-id': res.body.event_id,
      'webhook-id': res.body.event_id,
    });
    expect(received.headers['x-service-timestamp']).toBe(received.headers['webhook-timestamp']);
    expect(received.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);

    expect(() => verifyBothSchemes(received.body, received.headers, sub.secret)).not.toThrow();
    expect(verifySwitchboard(received.body, received.headers, sub.secret)).toBe(true);
    const standard = new Webhook(sub.secret).verify(
      received.body,
      received.headers as Record<string, string>,
    );
    expect(standard).toEqual(res.body.payload);

    const other = (await subscribe(ctx, `${base}/ok`)).secret;
    expect(verifySwitchboard(received.body, received.headers, other)).toBe(false);
    expect(() => verifyWebhook(received.body, received.headers, other)).toThrow();
    expect(() =>
      new Webhook(other).verify(received.body, received.headers as Record<string, string>),
    ).toThrow();

    // A test delivery leaves the subscription row exactly as it was.
    expect(await row(ctx, sub.id)).toEqual(before);
  });
});

describe('failed test deliveries are reported with 200 and never retried', () => {
  it('500 → delivered false, status_code 500, http_error', async () => {
    const sub = await subscribe(ctx, `${base}/fail`);
    const res = await sendTest(ctx, sub);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: false, status_code: 500, error: 'http_error' });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/fail']);
    expect((await row(ctx, sub.id)).consecutive_failures).toBe(0);
  });

  it('302 → redirect, and the redirect is not followed', async () => {
    const sub = await subscribe(ctx, `${base}/redirect`);
    const res = await sendTest(ctx, sub);
    expect(res.body).toMatchObject({ delivered: false, status_code: 302, error: 'redirect' });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/redirect']);
  });

  it('a closed port → status_code null, connection_refused', async () => {
    const sub = await subscribe(ctx, `https://127.0.0.1:${await closedPort()}/hook`);
    const res = await sendTest(ctx, sub);
    expect(res.body).toMatchObject({
      delivered: false,
      status_code: null,
      error: 'connection_refused',
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it('a certificate that does not name the host → status_code null, tls_error', async () => {
    const sub = await subscribe(ctx, `https://wrong-name.test:${receiver.port}/ok`);
    const res = await sendTest(ctx, sub);
    expect(res.body).toMatchObject({ delivered: false, status_code: null, error: 'tls_error' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('no answer within WEBHOOK_TIMEOUT_MS (1000) → status_code null, timeout', async () => {
    const fast = await subscribe(slowCtx, `${base}/ok`);
    const baseline = await baselineMs(() => sendTest(slowCtx, fast), 3);
    receiver.requests.length = 0;
    const sub = await subscribe(slowCtx, `${base}/slow`);
    const started = performance.now();
    const res = await sendTest(slowCtx, sub);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: false, status_code: null, error: 'timeout' });
    // Answered at the timeout, not when the receiver's late answer comes 3 s later.
    expect(performance.now() - started).toBeLessThan(boundMs(1000, baseline));
    expect(receiver.requests.map((r) => r.path)).toEqual(['/slow']);
  });
});

describe('a disabled subscription', () => {
  it('can be tested; the test changes nothing; enable then re-activates it', async () => {
    const sub = await subscribe(ctx, `${base}/ok`);
    await ctx.deps.knex('webhook_subscriptions').where({ id: sub.id }).update({
      is_active: false,
      consecutive_failures: 20,
      disabled_at: new Date(),
      disabled_reason: 'consecutive_failures',
    });
    const before = await row(ctx, sub.id);
    const res = await sendTest(ctx, sub);
    expect(res.body).toMatchObject({ delivered: true, status_code: 204, error: null });
    expect(receiver.requests).toHaveLength(1);
    expect(await row(ctx, sub.id)).toEqual(before);

    const again = await sendTest(ctx, sub); // still one request per call
    expect(again.body.delivered).toBe(true);
    expect(receiver.requests).toHaveLength(2);
    expect((await row(ctx, sub.id)).consecutive_failures).toBe(20);

    const enabled = await request(ctx.app)
      .post(`/api/v1/webhooks/${sub.id}/enable`)
      .set('Authorization', sub.auth);
    expect(enabled.body).toMatchObject({ is_active: true, consecutive_failures: 0 });
  });

  it('a deleted subscription cannot be tested', async () => {
    const sub = await subscribe(ctx, `${base}/ok`);
    await request(ctx.app).delete(`/api/v1/webhooks/${sub.id}`).set('Authorization', sub.auth);
    expect((await sendTest(ctx, sub)).status).toBe(404);
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('logs of test deliveries', () => {
  it('record the outcome, never the secret', async () => {
    const sub = await subscribe(ctx, `${base}/fail`);
    await sendTest(ctx, sub);
    const text = logs.text();
    expect(text).toContain('webhook test delivery');
    expect(text).toContain(sub.id);
    expect(text).not.toContain(sub.secret);
    expect(text).not.toContain(sub.secret.slice('whsec_'.length));
  });
});
