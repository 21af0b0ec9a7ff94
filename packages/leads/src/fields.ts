import type { FromSchema } from 'json-schema-to-ts';
import type { Lead, LeadFields } from '@switchboard/db';
import { LeadFieldError } from './errors';
import { isPossibleE164 } from '@switchboard/phone';
import type { createLeadBodySchema } from './schema';

/** A lead's writable fields as the API and MCP take them (snake_case, schema-checked). */
export type LeadInput = FromSchema<typeof createLeadBodySchema>;

const PHONE_MESSAGE = 'phone must be a valid phone number in E.164 format, e.g. +14155550123';

/** Tags in their first order, each once. */
export const uniqueTags = (tags: readonly string[]): string[] => [...new Set(tags)];

/**
 * Schema-checked input → the domain's fields. Phones must already be E.164 (the API and MCP
 * are strict; the CSV import normalises before it gets here).
 */
export function toLeadFields(input: LeadInput): LeadFields {
  if (typeof input.phone === 'string' && !isPossibleE164(input.phone)) {
    throw new LeadFieldError('phone', PHONE_MESSAGE);
  }
  const out: LeadFields = {};
  if (input.name !== undefined) out.name = input.name;
  if (input.phone !== undefined) out.phone = input.phone;
  if (input.email !== undefined) out.email = input.email;
  if (input.status !== undefined) out.status = input.status;
  if (input.notes !== undefined) out.notes = input.notes;
  if (input.tags !== undefined) out.tags = uniqueTags(input.tags);
  if (input.metadata !== undefined) out.metadata = input.metadata as Record<string, string>;
  if (input.receptionist_id !== undefined) out.receptionistId = input.receptionist_id;
  return out;
}

/** A lead has a phone or an email (or both). */
export function requireContact(f: { phone?: string | null; email?: string | null }): void {
  if (!f.phone && !f.email) {
    throw new LeadFieldError('phone', 'A lead needs a phone or an email (or both)');
  }
}

/** Public (snake_case) name of each domain field, in the order changes are listed. */
const PUBLIC_NAMES: ReadonlyArray<[keyof LeadFields, string]> = [
  ['name', 'name'],
  ['phone', 'phone'],
  ['email', 'email'],
  ['status', 'status'],
  ['notes', 'notes'],
  ['tags', 'tags'],
  ['metadata', 'metadata'],
  ['receptionistId', 'receptionist_id'],
];

const sameMetadata = (a: Record<string, string>, b: Record<string, string>): boolean => {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
};

const same = (field: keyof LeadFields, before: unknown, after: unknown): boolean => {
  if (field === 'tags') {
    const a = before as string[];
    const b = after as string[];
    return a.length === b.length && a.every((t, i) => t === b[i]);
  }
  if (field === 'metadata') {
    return sameMetadata(before as Record<string, string>, after as Record<string, string>);
  }
  return before === after;
};

/**
 * What `fields` would actually change on `lead`: the changes to write and the public names
 * of the changed fields. Nothing changed → both empty (a no-op update emits nothing).
 */
export function diffLead(
  lead: Lead,
  fields: LeadFields,
): { changes: LeadFields; changed: string[] } {
  const changes: Record<string, unknown> = {};
  const changed: string[] = [];
  for (const [field, publicName] of PUBLIC_NAMES) {
    const next = fields[field];
    if (next === undefined || same(field, lead[field], next)) continue;
    changes[field] = next;
    changed.push(publicName);
  }
  return { changes: changes as LeadFields, changed };
}
