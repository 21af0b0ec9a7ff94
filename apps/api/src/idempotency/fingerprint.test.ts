import { fingerprintRequest } from './fingerprint';

describe('fingerprintRequest', () => {
  const op = 'POST /calls/outbound';
  it('ignores key order at every depth', () => {
    expect(fingerprintRequest(op, { a: 1, b: { c: 2, d: [1, 2] } })).toBe(
      fingerprintRequest(op, { b: { d: [1, 2], c: 2 }, a: 1 }),
    );
  });
  it('tells bodies apart, and one body sent to two operations', () => {
    expect(fingerprintRequest(op, { a: 1 })).not.toBe(fingerprintRequest(op, { a: 2 }));
    expect(fingerprintRequest(op, { a: 1 })).not.toBe(
      fingerprintRequest('POST /sms/send', { a: 1 }),
    );
    expect(fingerprintRequest(op, [1, 2])).not.toBe(fingerprintRequest(op, [2, 1]));
  });
});
