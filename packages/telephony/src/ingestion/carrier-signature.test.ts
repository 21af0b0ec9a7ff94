import {
  CARRIER_SIGNATURE_HEADER,
  CARRIER_TIMESTAMP_HEADER,
  computeCarrierSignature,
  signCarrierMessage,
  verifyCarrierSignature,
} from './carrier-signature';

const OLD = 'o'.repeat(40);
const NEW = 'n'.repeat(40);
const BODY = Buffer.from('{"type":"sms.status","id":"r1"}');
const AT = 1_800_000_000;

const headersOf = (signed: Record<string, string>) => ({
  timestamp: signed[CARRIER_TIMESTAMP_HEADER],
  signature: signed[CARRIER_SIGNATURE_HEADER],
});

describe('verifyCarrierSignature', () => {
  it('accepts a signature of either secret while one replaces the other', () => {
    for (const secret of [OLD, NEW]) {
      const signed = headersOf(signCarrierMessage(secret, BODY, AT));
      expect(verifyCarrierSignature([NEW, OLD], signed, BODY, AT)).toEqual({ ok: true });
    }
    const retired = headersOf(signCarrierMessage(OLD, BODY, AT));
    expect(verifyCarrierSignature([NEW], retired, BODY, AT).ok).toBe(false);
  });

  it('accepts a list of signatures when one of them is valid', () => {
    const valid = computeCarrierSignature(NEW, String(AT), BODY);
    const signature = `${'0'.repeat(64)}, ${valid}`;
    expect(verifyCarrierSignature([NEW], { timestamp: String(AT), signature }, BODY, AT).ok).toBe(
      true,
    );
  });

  it('refuses a timestamp more than 300 s away, either way, or not unix seconds', () => {
    for (const [at, ok] of [
      [AT - 300, true],
      [AT + 300, true],
      [AT - 301, false],
      [AT + 301, false],
    ] as const) {
      const signed = headersOf(signCarrierMessage(NEW, BODY, at));
      expect(verifyCarrierSignature([NEW], signed, BODY, AT).ok).toBe(ok);
    }
    for (const timestamp of ['', '1.5', '-1', `${AT}x`, ' 1800000000']) {
      const signature = computeCarrierSignature(NEW, timestamp, BODY);
      expect(verifyCarrierSignature([NEW], { timestamp, signature }, BODY, AT)).toEqual({
        ok: false,
        reason: 'X-Carrier-Timestamp must be unix seconds within 300 s of now',
      });
    }
  });

  it('refuses missing headers, another body, and signatures that are not 64 hex digits', () => {
    const signed = headersOf(signCarrierMessage(NEW, BODY, AT));
    expect(verifyCarrierSignature([NEW], { ...signed, signature: undefined }, BODY, AT)).toEqual({
      ok: false,
      reason: 'X-Carrier-Timestamp and X-Carrier-Signature are required',
    });
    expect(verifyCarrierSignature([NEW], signed, Buffer.from(`${BODY} `), AT).ok).toBe(false);
    const upper = { ...signed, signature: signed.signature?.toUpperCase() };
    expect(verifyCarrierSignature([NEW], upper, BODY, AT).ok).toBe(false);
  });
});
