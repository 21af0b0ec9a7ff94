import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * True for a dialable number written in strict E.164 (`+` and digits only, no spaces), as
 * libphonenumber's metadata knows it. Fictional NANP numbers such as +1 415 555 01XX are
 * valid; an unassigned area code or a wrong length is not.
 */
export function isE164(value: string): boolean {
  if (!/^\+[1-9]\d{6,14}$/.test(value)) return false;
  const parsed = parsePhoneNumberFromString(value);
  return parsed !== undefined && parsed.number === value && parsed.isValid();
}
