import { parsePhoneNumberFromString } from 'libphonenumber-js';

/** E.164 syntax (docs/API.md, Basics): `+`, a country code not starting with 0, 7–15 digits. */
export const E164_PATTERN = '^\\+[1-9]\\d{6,14}$';
const E164 = new RegExp(E164_PATTERN);

/**
 * The contract's phone number: strict E.164 (`+` and digits, no spaces) with a length that
 * is possible for its country code (libphonenumber's `isPossibleNumber`). Deliberately not
 * `isValid`: numbers in unassigned or fictional ranges (+1 555 …) are accepted, because the
 * carrier, not this service, decides what can be dialled. Every feature that takes a phone
 * number (outbound calls, SMS, leads, campaigns) uses this one check, usually through the
 * API's `e164` schema format.
 */
export function isPossibleE164(value: string): boolean {
  if (!E164.test(value)) return false;
  const parsed = parsePhoneNumberFromString(value);
  return parsed !== undefined && parsed.number === value && parsed.isPossible();
}

/**
 * A phone as people write it in a spreadsheet (`+1 (415) 555-0123`, `+44 20 7946 0958`,
 * `0044…`) → E.164, or null when it is not an international number. Without a country code
 * a number is ambiguous, so it is refused rather than guessed.
 */
export function normalizePhone(raw: string): string | null {
  let s = raw.trim().replace(/[\s().\-/]/g, '');
  if (s.startsWith('00')) s = `+${s.slice(2)}`;
  return isPossibleE164(s) ? s : null;
}
