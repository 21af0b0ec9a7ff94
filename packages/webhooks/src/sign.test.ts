import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { generateSigningSecret } from './secrets';
import { signPayload } from './sign';

// The signer alone; what it makes is verified by the SDK's verifyWebhook
// (packages/sdk/src/verify-webhook.test.ts), the one verifier.
const secret = generateSigningSecret();
const eventId = 'evt_01HZX3Q8M4T5';
const body = JSON.stringify({ id: eventId, event: 'call.started', data: { call_id: 'c1' } });
const timestamp = 1_700_000_000;
const headers = signPayload({ secret, eventId, body, timestamp });

describe('generateSigningSecret', () => {
  it('is whsec_ + base64 of 32 random bytes', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(generateSigningSecret()).not.toBe(secret);
  });
});

describe('signPayload', () => {
  it('sets both header schemes with one timestamp and the event id', () => {
    expect(headers['x-service-timestamp']).toBe(String(timestamp));
    expect(headers['webhook-timestamp']).toBe(String(timestamp));
    expect(headers['x-service-event-id']).toBe(eventId);
    expect(headers['webhook-id']).toBe(eventId);
    expect(headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('defaults the timestamp to now', () => {
    const now = Math.floor(Date.now() / 1000);
    const ts = Number(signPayload({ secret, eventId, body })['x-service-timestamp']);
    expect(Math.abs(ts - now)).toBeLessThanOrEqual(1);
  });

  it('refuses malformed input', () => {
    expect(() => signPayload({ secret: 'nope', eventId, body })).toThrow(TypeError);
    expect(() => signPayload({ secret, eventId: 'evt_1\r\nx: y', body })).toThrow(TypeError);
    expect(() => signPayload({ secret, eventId, body, timestamp: 1.5 })).toThrow(RangeError);
  });

  it('x-service-signature equals an independent node:crypto HMAC keyed by the whole secret', () => {
    const expected = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
    expect(headers['x-service-signature']).toBe(expected);
  });

  it('the standardwebhooks package verifies the headers', () => {
    const wh = new Webhook(secret);
    const fresh = signPayload({ secret, eventId, body });
    expect(wh.verify(body, { ...fresh })).toEqual(JSON.parse(body));
    const other = new Webhook(generateSigningSecret());
    expect(() => other.verify(body, { ...fresh })).toThrow();
  });
});
