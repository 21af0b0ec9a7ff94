import type { FromSchema } from 'json-schema-to-ts';
import { LEAD_TAG_MAX, leadFieldSchemas } from '@switchboard/leads';
import { cursorSchema, livemode, nullableTimestamp, timestamp } from '../../shared/schemas';

/** Request bodies are the leads package's own (REST, MCP and CSV accept the same values). */
export { createLeadBodySchema, updateLeadBodySchema } from '@switchboard/leads';

/** The lead read shape (docs/API.md, Leads). */
export const leadSchema = {
  title: 'Lead',
  type: 'object',
  required: [
    'id',
    'name',
    'phone',
    'email',
    'source',
    'status',
    'notes',
    'tags',
    'metadata',
    'receptionist_id',
    'created_at',
    'updated_at',
    'livemode',
  ],
  properties: {
    id: { type: 'string' },
    name: { type: ['string', 'null'] },
    phone: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    source: { enum: ['api', 'csv_import', 'call', 'mcp'] },
    status: leadFieldSchemas.status,
    notes: { type: ['string', 'null'] },
    tags: { type: 'array', items: { type: 'string' } },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    receptionist_id: { type: ['string', 'null'] },
    created_at: timestamp,
    updated_at: timestamp,
    livemode,
  },
} as const;

export const SEARCH_Q_MAX = 200;

/** GET /leads/search: every filter optional; without `q`, the newest leads. */
export const leadSearchQuerySchema = {
  type: 'object',
  properties: {
    q: {
      type: 'string',
      maxLength: SEARCH_Q_MAX,
      description:
        'Matches a name or an email containing it (case-insensitive), or a phone containing its ' +
        'digits; one or two characters match the start of a name, an email or the phone digits',
      'x-error-message': `q must be a string of at most ${SEARCH_Q_MAX} characters`,
    },
    status: leadFieldSchemas.status,
    tag: {
      type: 'string',
      minLength: 1,
      maxLength: LEAD_TAG_MAX,
      'x-error-message': `tag must be a string of 1 to ${LEAD_TAG_MAX} characters`,
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 50,
      default: 10,
      description: 'Page size, 1 to 50 (default 10)',
      'x-error-message': 'limit must be an integer between 1 and 50',
    },
    cursor: cursorSchema,
  },
} as const;

const rowErrorSchema = {
  type: 'object',
  required: ['row', 'field', 'message'],
  properties: {
    row: { type: 'integer', description: '1-based data row, header excluded' },
    field: { type: ['string', 'null'] },
    message: { type: 'string' },
  },
} as const;

/** An import and its progress. */
export const leadImportSchema = {
  title: 'LeadImport',
  type: 'object',
  required: [
    'id',
    'status',
    'total_rows',
    'processed_rows',
    'created',
    'updated',
    'skipped',
    'duplicates',
    'errors',
    'failure_reason',
    'created_at',
    'completed_at',
    'livemode',
  ],
  properties: {
    id: { type: 'string' },
    status: { enum: ['processing', 'completed', 'failed'] },
    total_rows: { type: 'integer', description: 'Data rows of the file, header excluded' },
    processed_rows: { type: 'integer' },
    created: { type: 'integer' },
    updated: {
      type: 'integer',
      description: 'Rows that matched a lead the file did not touch yet',
    },
    skipped: { type: 'integer', description: 'Rows with an error (see errors)' },
    duplicates: {
      type: 'integer',
      description: 'Rows whose key (phone, or email without phone) an earlier row already had',
    },
    errors: { type: 'array', items: rowErrorSchema, maxItems: 100 },
    failure_reason: { type: ['string', 'null'] },
    created_at: timestamp,
    completed_at: nullableTimestamp,
    livemode,
  },
} as const;

export const leadExample: FromSchema<typeof leadSchema> = {
  id: 'lead_9Vb3Nx6Qr1Ts',
  name: 'Dana Whitfield',
  phone: '+14155550123',
  email: 'dana@example.com',
  source: 'api',
  status: 'new',
  notes: 'Asked for a boiler service quote',
  tags: ['boiler'],
  metadata: { crm_id: 'c-42' },
  receptionist_id: null,
  created_at: '2026-11-21T10:15:00.000Z',
  updated_at: '2026-11-21T10:15:00.000Z',
  livemode: true,
};

export const createLeadExample = {
  name: 'Dana Whitfield',
  phone: '+14155550123',
  email: 'dana@example.com',
  notes: 'Asked for a boiler service quote',
  tags: ['boiler'],
  metadata: { crm_id: 'c-42' },
};

export const updateLeadExample = { status: 'contacted', notes: 'Call back on Tuesday' };

export const leadImportExample: FromSchema<typeof leadImportSchema> = {
  id: 'imp_4Rt8Wm2Zk7Hc',
  status: 'processing',
  total_rows: 12,
  processed_rows: 0,
  created: 0,
  updated: 0,
  skipped: 0,
  duplicates: 0,
  errors: [],
  failure_reason: null,
  created_at: '2026-11-21T10:15:00.000Z',
  completed_at: null,
  livemode: true,
};

export const completedLeadImportExample: FromSchema<typeof leadImportSchema> = {
  ...leadImportExample,
  status: 'completed',
  processed_rows: 12,
  created: 5,
  skipped: 5,
  duplicates: 2,
  errors: [
    {
      row: 4,
      field: 'phone',
      message: 'phone must be an international number, e.g. +14155550123',
    },
  ],
  completed_at: '2026-11-21T10:15:01.250Z',
};

export const leadCsvExample =
  'name,phone,email,tags\r\nDana Whitfield,+1 415 555 0123,dana@example.com,boiler;quote\r\n';
