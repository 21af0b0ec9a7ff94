import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import {
  Switchboard,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookEvent,
} from '@switchboard/sdk';
import {
  generateCertificate,
  startReceiver,
  type ReceivedRequest,
  type TestReceiver,
} from '../../packages/webhooks/src/testing/tls-receiver';
import { createTestContext, type TestContext } from '../support/context';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';
import { addReceptionist } from '../support/receptionist';

// Real deliveries by the worker, over HTTPS to a receiver on 127.0.0.1, verified by three
// independent implementations: Svix's library, the Standard Webhooks library, and the SDK's
// verifyWebhook. The SDK drives everything (subscription, outbound call, delivery log,
// retry, test event), so its delivery-log methods run against the real API and worker too.
let ctx: TestContext;
let worker: TestWorker;
let receiver: TestReceiver;
let server: Server;
let client: Switchboard;
let subscriptionId: string;
let secret: string;
let rcp: string;

beforeAll(async () => {
  const cert = generateCertificate('IP:127.0.0.1');
  receiver = await startReceiver(cert, { '/hook': (_req, res) => res.writeHead(204).end() });
  ctx = await createTestContext({ SIMULATOR_SPEED: '1000' }, { webhookCa: cert.cert });
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { tenantId, key } = await ctx.tenant(['admin']);
  rcp = await addReceptionist(ctx, tenantId, { phoneNumber: '+14155550199' });
  client = new Switchboard({
    apiKey: key,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  });
  const created = await client.webhooks.create({ url: `https://127.0.0.1:${receiver.port}/hook` });
  subscriptionId = created.id;
  secret = created.signing_secret;
  worker = await startTestWorker(ctx, { webhookCa: cert.cert });
});

afterAll(async () => {
  await worker?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await ctx?.close();
  await receiver?.close();
});

const headersOf = (r: ReceivedRequest): Record<string, string> =>
  Object.fromEntries(
    Object.entries(r.headers).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
const delivered = (event: string) => receiver.requests.filter((r) => r.body.includes(`"${event}"`));

/** All three verifiers accept it and agree on the payload; the SDK's answer is typed. */
function verifyThreeWays(r: ReceivedRequest): WebhookEvent {
  const headers = headersOf(r);
  const parsed = JSON.parse(r.body);
  expect(new SvixWebhook(secret).verify(r.body, headers)).toEqual(parsed);
  expect(new StandardWebhook(secret).verify(r.body, headers)).toEqual(parsed);
  const event = verifyWebhook(r.body, r.headers, secret, { toleranceSeconds: 300 });
  expect(event).toEqual(parsed);
  // And the SDK checks the Standard Webhooks scheme on its own too.
  const standardOnly = Object.fromEntries(
    Object.entries(headers).filter(([name]) => !name.startsWith('x-service-')),
  );
  expect(verifyWebhook(r.body, standardOnly, secret)).toEqual(parsed);
  return event;
}

describe('deliveries of an outbound call started with the SDK', () => {
  let callId: string;

  beforeAll(async () => {
    callId = (await client.calls.startOutbound({ receptionist_id: rcp, to: '+14155550123' })).id;
    await waitFor(
      'call.started and call.completed at the receiver',
      () => delivered('call.completed').length > 0 && delivered('call.started').length > 0,
    );
  });

  it('verify with svix, standardwebhooks and the SDK, typed by event', () => {
    for (const r of [...delivered('call.started'), ...delivered('call.completed')]) {
      const event = verifyThreeWays(r);
      expect(event.event === 'call.started' || event.event === 'call.completed').toBe(true);
      if (event.event === 'call.completed') {
        expect(event.data.call_id).toBe(callId);
        expect(event.receptionist_id).toBe(rcp);
        expect(event.data.outcome).toBe('booked');
      }
    }
  });

  it('a tampered delivery fails every verifier; the SDK says why', () => {
    const r = delivered('call.completed')[0] as ReceivedRequest;
    const tampered = r.body.replace('"booked"', '"spam"');
    expect(tampered).not.toBe(r.body);
    expect(() => new SvixWebhook(secret).verify(tampered, headersOf(r))).toThrow();
    expect(() => new StandardWebhook(secret).verify(tampered, headersOf(r))).toThrow();
    expect(() => verifyWebhook(tampered, r.headers, secret)).toThrow(WebhookVerificationError);
    try {
      verifyWebhook(tampered, r.headers, secret);
    } catch (error) {
      expect((error as WebhookVerificationError).reason).toBe('invalid_signature');
    }
  });

  it('a replayed (stale) delivery is refused by the SDK', () => {
    const r = delivered('call.started')[0] as ReceivedRequest;
    const later = Number(r.headers['x-service-timestamp']) + 301;
    expect(() => verifyWebhook(r.body, r.headers, secret, { now: later })).toThrow(
      expect.objectContaining({ reason: 'timestamp_out_of_tolerance' }),
    );
  });

  it('listDeliveries() shows them; retryDelivery() sends one again, verified again', async () => {
    const deliveries = await client.webhooks.listDeliveries(subscriptionId).toArray();
    const completed = deliveries.find((d) => d.event_type === 'call.completed');
    expect(completed).toMatchObject({ status: 'succeeded', round: 1 });
    expect(completed?.attempts[0]).toMatchObject({ status_code: 204, error: null });

    const before = delivered('call.completed').length;
    const retried = await client.webhooks.retryDelivery(subscriptionId, completed?.id as string);
    expect(retried).toMatchObject({ id: completed?.id, round: 2 });
    await waitFor('the retried delivery', () => delivered('call.completed').length > before);
    const again = delivered('call.completed').at(-1) as ReceivedRequest;
    expect(again.headers['webhook-id']).toBe(completed?.event_id);
    verifyThreeWays(again);
  });
});

describe('webhooks.test()', () => {
  it('delivers a webhook.test that all three verify', async () => {
    const result = await client.webhooks.test(subscriptionId);
    expect(result).toMatchObject({ delivered: true, status_code: 204 });
    const r = receiver.requests.find((x) => x.headers['webhook-id'] === result.event_id);
    const event = verifyThreeWays(r as ReceivedRequest);
    expect(event).toMatchObject({ type: 'webhook.test', event: 'webhook.test' });
  });
});
