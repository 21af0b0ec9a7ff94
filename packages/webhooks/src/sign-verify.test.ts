import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { generateSigningSecret } from './secrets';
import { signPayload } from './sign';
import {
  isValidServiceSignature,
  isValidStandardWebhook,
  verifyServiceSignature,
  verifyStandardWebhook,
  WebhookVerificationError,
  type VerificationFailureReason,
  type VerifyInput,
} from './verify';

const secret = generateSigningSecret();
const eventId = 'evt_01HZX3Q8M4T5';
const body = JSON.stringify({ id: eventId, event: 'call.started', data: { call_id: 'c1' } });
const timestamp = 1_700_000_000;
const headers = signPayload({ secret, eventId, body, timestamp });
const base: VerifyInput = { secret, body, headers, now: timestamp };

function reasonOf(
  check: (input: VerifyInput) => void,
  input: VerifyInput,
): VerificationFailureReason | 'ok' {
  try {
    check(input);
    return 'ok';
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
}

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

  it('our verifier accepts what the standardwebhooks package signs', () => {
    const signature = new Webhook(secret).sign(eventId, new Date(timestamp * 1000), body);
    const theirs = {
      'webhook-id': eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    };
    expect(isValidStandardWebhook({ ...base, headers: theirs })).toBe(true);
  });
});

describe.each([
  ['service', verifyServiceSignature, 'x-service-timestamp', 'x-service-signature'],
  ['standard', verifyStandardWebhook, 'webhook-timestamp', 'webhook-signature'],
] as const)('%s verification', (_name, check, tsHeader, sigHeader) => {
  it('round-trips, including a Buffer body and upper-case header names', () => {
    expect(reasonOf(check, base)).toBe('ok');
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(reasonOf(check, { ...base, body: Buffer.from(body), headers: upper })).toBe('ok');
    expect(reasonOf(check, { ...base, headers: new Headers(headers) })).toBe('ok');
  });

  it('rejects a tampered body', () => {
    expect(reasonOf(check, { ...base, body: body.replace('c1', 'c2') })).toBe('invalid_signature');
    expect(reasonOf(check, { ...base, body: `${body} ` })).toBe('invalid_signature');
  });

  it('rejects a tampered timestamp', () => {
    const moved = { ...headers, [tsHeader]: String(timestamp + 1) };
    expect(reasonOf(check, { ...base, headers: moved })).toBe('invalid_signature');
  });

  it('rejects timestamps outside the tolerance in both directions', () => {
    expect(reasonOf(check, { ...base, now: timestamp + 301 })).toBe('timestamp_out_of_tolerance');
    expect(reasonOf(check, { ...base, now: timestamp - 301 })).toBe('timestamp_out_of_tolerance');
    expect(reasonOf(check, { ...base, now: timestamp + 300 })).toBe('ok');
    expect(reasonOf(check, { ...base, now: timestamp + 30, toleranceSeconds: 10 })).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('rejects the wrong secret, garbage and missing headers', () => {
    expect(reasonOf(check, { ...base, secret: generateSigningSecret() })).toBe('invalid_signature');
    expect(reasonOf(check, { ...base, headers: { ...headers, [tsHeader]: '17e8' } })).toBe(
      'invalid_timestamp',
    );
    expect(reasonOf(check, { ...base, headers: { ...headers, [sigHeader]: 'x' } })).toBe(
      'invalid_signature',
    );
    const { [sigHeader]: _dropped, ...rest } = headers;
    expect(reasonOf(check, { ...base, headers: rest })).toBe('missing_header');
  });
});

describe('standard webhook signature lists', () => {
  const good = headers['webhook-signature'];
  const wrong = signPayload({ secret: generateSigningSecret(), eventId, body, timestamp })[
    'webhook-signature'
  ];

  it('accepts any matching v1 entry of a space-separated list', () => {
    const list = { ...headers, 'webhook-signature': `${wrong} v1a,abc ${good}` };
    expect(isValidStandardWebhook({ ...base, headers: list })).toBe(true);
  });

  it('rejects a list with no match and non-v1 entries carrying the right value', () => {
    const value = good.slice(3);
    const list = { ...headers, 'webhook-signature': `${wrong} v2,${value} ${value}` };
    expect(isValidStandardWebhook({ ...base, headers: list })).toBe(false);
  });

  it('rejects a changed webhook-id', () => {
    expect(
      isValidStandardWebhook({ ...base, headers: { ...headers, 'webhook-id': 'evt_other' } }),
    ).toBe(false);
  });

  it('reports an unusable secret', () => {
    expect(reasonOf(verifyStandardWebhook, { ...base, secret: 'plain-secret' })).toBe(
      'invalid_secret',
    );
    expect(isValidServiceSignature({ ...base, secret: 'plain-secret' })).toBe(false);
  });
});
