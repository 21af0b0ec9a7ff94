import { isPossibleE164 } from './phone';

describe('isPossibleE164', () => {
  it.each([
    '+15551234567', // the contract's example: a fictional range, but a possible length
    '+14155550123',
    '+442071838750',
    '+4930123456',
    '+81312345678',
  ])('accepts %s', (n) => {
    expect(isPossibleE164(n)).toBe(true);
  });

  it.each([
    '15551234567', // no plus
    '+1 555 123 4567', // spaces
    '+1-555-123-4567',
    '+0123456789', // country codes never start with 0
    '+1415555012', // too short for +1
    '+141555501234', // too long for +1
    '+999123456789', // no such country code
    '+1234567890123456', // longer than E.164 allows
    '',
  ])('refuses %j', (n) => {
    expect(isPossibleE164(n)).toBe(false);
  });
});
