import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { ImportRowError, LeadFields, LeadStatus } from '@switchboard/db';
import { uniqueTags } from '../fields';
import { normalizePhone } from '@switchboard/phone';
import { leadFieldSchemas } from '../schema';
import type { ColumnMap } from './csv';

/** A data row read from the file: a lead's fields and the key it is upserted by, or an error. */
export type ParsedRow =
  | { row: number; ok: true; key: string; fields: LeadFields }
  | { row: number; ok: false; error: ImportRowError };

// The same field rules as the REST body (phone is normalised first, then must be E.164).
const rowSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: leadFieldSchemas.name,
    email: leadFieldSchemas.email,
    status: leadFieldSchemas.status,
    notes: leadFieldSchemas.notes,
    tags: leadFieldSchemas.tags,
    metadata: leadFieldSchemas.metadata,
  },
} as const;
/** The row validator, compiled at the first row an import checks. */
let compiledRow: ValidateFunction | undefined;
const rowValidator = (): ValidateFunction =>
  (compiledRow ??= addFormats(new Ajv({ strict: false, verbose: true })).compile(rowSchema));

function errorOf(err: ErrorObject): { field: string; message: string } {
  const field = err.instancePath.split('/').filter(Boolean)[0] ?? 'row';
  const custom = (err.parentSchema as { 'x-error-message'?: string } | undefined)?.[
    'x-error-message'
  ];
  const allowed = (err.params as { allowedValues?: unknown[] }).allowedValues;
  const message =
    custom ??
    (allowed ? `${field} must be one of ${allowed.join(', ')}` : `${field} ${err.message}`);
  return {
    field: field === 'metadata' ? err.instancePath.slice(1).replace('/', '.') : field,
    message,
  };
}

/** The key a row is upserted by: its phone, or its email (lower-cased) when it has none. */
export const rowKey = (f: LeadFields): string =>
  f.phone ? f.phone : `email:${(f.email as string).toLowerCase()}`;

/**
 * One CSV record → the lead fields it sets. Cells are trimmed; an empty cell sets nothing
 * (an import never clears a value); `tags` are `;`-separated; other columns are metadata.
 */
export function parseRow(record: readonly string[], columns: ColumnMap, row: number): ParsedRow {
  const fail = (field: string | null, message: string): ParsedRow => ({
    row,
    ok: false,
    error: { row, field, message },
  });
  const extra = record.slice(columns.width).filter((v) => v.trim() !== '');
  if (extra.length > 0) {
    return fail(null, `The row has ${record.length} fields; the header has ${columns.width}`);
  }
  const cell = (index: number) => (record[index] ?? '').trim();
  const input: Record<string, unknown> = {};
  let phone: string | null = null;
  for (const { index, field } of columns.known) {
    const value = cell(index);
    if (value === '') continue;
    if (field === 'phone') {
      phone = normalizePhone(value);
      if (!phone) {
        return fail('phone', 'phone must be an international number, e.g. +14155550123');
      }
    } else if (field === 'tags') {
      input.tags = uniqueTags(
        value
          .split(';')
          .map((t) => t.trim())
          .filter(Boolean),
      );
    } else if (field === 'status') {
      input.status = value.toLowerCase();
    } else {
      input[field] = value;
    }
  }
  const metadata: Record<string, string> = {};
  for (const { index, key } of columns.metadata) {
    const value = cell(index);
    if (value !== '') metadata[key] = value;
  }
  if (Object.keys(metadata).length > 0) input.metadata = metadata;
  const validate = rowValidator();
  if (!validate(input)) {
    const { field, message } = errorOf(validate.errors?.[0] as ErrorObject);
    return fail(field, message);
  }
  if (!phone && !input.email) return fail('phone', 'A row needs a phone or an email (or both)');
  const fields: LeadFields = {
    ...(input as Omit<LeadFields, 'status'>),
    ...(input.status ? { status: input.status as LeadStatus } : {}),
    ...(phone ? { phone } : {}),
  };
  return { row, ok: true, key: rowKey(fields), fields };
}
