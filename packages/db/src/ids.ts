import { randomUUID } from 'node:crypto';

/** Type prefixes of public ids (docs/API.md, Basics); a prefix is part of the public id format. */
export type IdPrefix =
  'ten' | 'key' | 'rcp' | 'call' | 'sms' | 'lead' | 'imp' | 'cmp' | 'evt' | 'dlv' | 'att' | 'ps';

/** A new opaque id: the type prefix and 128 random bits as 32 hex characters. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}`;
}
