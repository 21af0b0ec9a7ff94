import { Webhook } from 'standardwebhooks';
import { generateSigningSecret, signPayload } from '@switchboard/webhooks';
import { verifyWebhook, WebhookVerificationError, type WebhookEventOf } from './index';

// verifyWebhook, the one verifier of deliveries (the service's tests and scripts use it too),
// against deliveries signed by the service's own signer (packages/webhooks).
// Real deliveries by the worker are verified in test/sdk/webhooks.test.ts.
const secret = generateSigningSecret();
const envelope = {
  id: 'evt_1',
  event: 'call.started',
  receptionist_id: 'rcp_1',
  data: {
    call_id: 'call_1',
    direction: 'inbound',
    from: '+14155550123',
    to: '+14155550199',
    started_at: '2026-11-21T10:15:00.000Z',
  },
  timestamp: '2026-11-21T10:15:00.000Z',
};
const body = JSON.stringify(envelope);
const NOW = 1_795_256_100;
const signed = (overrides: { body?: string; secret?: string; timestamp?: number } = {}) =>
  signPayload({
    secret: overrides.secret ?? secret,
    eventId: 'evt_1',
    body: overrides.body ?? body,
    timestamp: overrides.timestamp ?? NOW,
  });
const standardOnly = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('webhook-')));

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  return 'verified';
};

describe('verifyWebhook', () => {
  it('returns the typed envelope of a delivery signed with both schemes', () => {
    const event = verifyWebhook(body, signed(), secret, { now: NOW });
    expect(event).toEqual(envelope);
    if (event.event === 'call.started') {
      const started: WebhookEventOf<'call.started'> = event;
      expect(started.data.direction).toBe('inbound');
    }
  });

  it('verifies the Standard Webhooks signature alone, from a Headers object and raw bytes', () => {
    const headers = new Headers(standardOnly(signed()));
    const event = verifyWebhook(Buffer.from(body), headers, secret, { now: NOW });
    expect(event.id).toBe('evt_1');
  });

  it('refuses a tampered body with either scheme', () => {
    const tampered = body.replace('+14155550123', '+14155550124');
    expect(reasonOf(() => verifyWebhook(tampered, signed(), secret, { now: NOW }))).toBe(
      'invalid_signature',
    );
    expect(
      reasonOf(() => verifyWebhook(tampered, standardOnly(signed()), secret, { now: NOW })),
    ).toBe('invalid_signature');
  });

  it('refuses a signature made with another secret', () => {
    const other = signed({ secret: generateSigningSecret() });
    expect(reasonOf(() => verifyWebhook(body, other, secret, { now: NOW }))).toBe(
      'invalid_signature',
    );
    expect(reasonOf(() => verifyWebhook(body, standardOnly(other), secret, { now: NOW }))).toBe(
      'invalid_signature',
    );
  });

  it('refuses a stale (replayed) or future delivery, within a configurable tolerance', () => {
    const headers = signed({ timestamp: NOW - 301 });
    expect(reasonOf(() => verifyWebhook(body, headers, secret, { now: NOW }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(
      reasonOf(() =>
        verifyWebhook(body, standardOnly(signed({ timestamp: NOW + 301 })), secret, { now: NOW }),
      ),
    ).toBe('timestamp_out_of_tolerance');
    expect(
      reasonOf(() => verifyWebhook(body, headers, secret, { now: NOW, toleranceSeconds: 600 })),
    ).toBe('verified');
    // The default clock is the real one: a delivery signed years ago is stale today.
    expect(reasonOf(() => verifyWebhook(body, signed({ timestamp: 1_000_000_000 }), secret))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('refuses missing headers, a malformed timestamp, a bad secret and a non-envelope body', () => {
    expect(reasonOf(() => verifyWebhook(body, {}, secret, { now: NOW }))).toBe('missing_header');
    const badTimestamp = { ...signed(), 'x-service-timestamp': 'yesterday' };
    expect(reasonOf(() => verifyWebhook(body, badTimestamp, secret, { now: NOW }))).toBe(
      'invalid_timestamp',
    );
    expect(
      reasonOf(() => verifyWebhook(body, standardOnly(signed()), 'not-a-secret', { now: NOW })),
    ).toBe('invalid_secret');
    const notJson = 'hello';
    expect(
      reasonOf(() => verifyWebhook(notJson, signed({ body: notJson }), secret, { now: NOW })),
    ).toBe('invalid_payload');
    const notEnvelope = '{"hello":1}';
    expect(
      reasonOf(() =>
        verifyWebhook(notEnvelope, signed({ body: notEnvelope }), secret, { now: NOW }),
      ),
    ).toBe('invalid_payload');
  });
});

// Each scheme alone: a delivery carrying `x-service-signature` is checked by it, one without
// it by the Standard Webhooks headers.
describe.each([
  ['x-service', (h: Record<string, string>) => h, 'x-service-timestamp', 'x-service-signature'],
  ['standard', standardOnly, 'webhook-timestamp', 'webhook-signature'],
] as const)('the %s scheme', (_name, scheme, tsHeader, sigHeader) => {
  const headers = scheme(signed());
  const verify = (h: Parameters<typeof verifyWebhook>[1], options = {}, raw: string = body) =>
    reasonOf(() => verifyWebhook(raw, h, secret, { now: NOW, ...options }));

  it('verifies upper-case header names, a Headers object and raw bytes', () => {
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verify(upper)).toBe('verified');
    expect(verify(new Headers(headers))).toBe('verified');
    expect(reasonOf(() => verifyWebhook(Buffer.from(body), headers, secret, { now: NOW }))).toBe(
      'verified',
    );
  });

  it('refuses a body changed by one space, and a moved timestamp', () => {
    expect(verify(headers, {}, `${body} `)).toBe('invalid_signature');
    expect(verify({ ...headers, [tsHeader]: String(NOW + 1) })).toBe('invalid_signature');
  });

  it('holds the tolerance in both directions, bounds included', () => {
    expect(verify(headers, { now: NOW + 301 })).toBe('timestamp_out_of_tolerance');
    expect(verify(headers, { now: NOW - 301 })).toBe('timestamp_out_of_tolerance');
    expect(verify(headers, { now: NOW + 300 })).toBe('verified');
    expect(verify(headers, { now: NOW - 300 })).toBe('verified');
    expect(verify(headers, { now: NOW + 30, toleranceSeconds: 10 })).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('refuses a garbage timestamp or signature, and a missing header', () => {
    expect(verify({ ...headers, [tsHeader]: '17e8' })).toBe('invalid_timestamp');
    expect(verify({ ...headers, [sigHeader]: 'x' })).toBe('invalid_signature');
    const { [tsHeader]: _dropped, ...rest } = headers;
    expect(verify(rest)).toBe('missing_header');
  });
});

describe('signature lists (a secret rotation overlap)', () => {
  const other = signed({ secret: generateSigningSecret() });
  const good = signed();

  it('x-service: any entry of a comma-separated list', () => {
    const list = `${other['x-service-signature']},${good['x-service-signature']}`;
    expect(
      reasonOf(() =>
        verifyWebhook(body, { ...good, 'x-service-signature': list }, secret, { now: NOW }),
      ),
    ).toBe('verified');
  });

  it('standard: any v1 entry of a space-separated list, never another version', () => {
    const value = (good['webhook-signature'] as string).slice(3);
    const verify = (list: string) =>
      reasonOf(() =>
        verifyWebhook(body, { ...standardOnly(good), 'webhook-signature': list }, secret, {
          now: NOW,
        }),
      );
    expect(verify(`${other['webhook-signature']} v1a,abc v1,${value}`)).toBe('verified');
    expect(verify(`${other['webhook-signature']} v2,${value} ${value}`)).toBe('invalid_signature');
  });

  it('standard: refuses a changed webhook-id', () => {
    const changed = { ...standardOnly(good), 'webhook-id': 'evt_other' };
    expect(reasonOf(() => verifyWebhook(body, changed, secret, { now: NOW }))).toBe(
      'invalid_signature',
    );
  });

  it('a secret that is not whsec_ + base64 verifies neither scheme', () => {
    expect(reasonOf(() => verifyWebhook(body, good, 'plain-secret', { now: NOW }))).toBe(
      'invalid_signature',
    );
  });
});

it('verifies what the standardwebhooks package signs', () => {
  const signature = new Webhook(secret).sign('evt_1', new Date(NOW * 1000), body);
  const theirs = {
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(NOW),
    'webhook-signature': signature,
  };
  expect(reasonOf(() => verifyWebhook(body, theirs, secret, { now: NOW }))).toBe('verified');
});
