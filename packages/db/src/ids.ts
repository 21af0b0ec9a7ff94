import { randomUUID } from 'node:crypto';

/** Type prefixes of CONTRACT.md section 1; a prefix is part of the public id format. */
export type IdPrefix =
  'ten' | 'key' | 'rcp' | 'call' | 'sms' | 'lead' | 'cmp' | 'evt' | 'dlv' | 'att';

/** A new opaque id: the type prefix and 128 random bits as 32 hex characters. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}`;
}
