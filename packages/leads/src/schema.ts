/**
 * The writable fields of a lead (docs/API.md, Leads) as JSON Schema, `as const`: the
 * REST bodies, the MCP tool inputs and the CSV rows are all checked against these, so the
 * three ways in accept exactly the same values. Text never carries NUL (docs/API.md, Errors).
 */
const NO_NUL = '^[^\\u0000]*$';

export const LEAD_NAME_MAX = 200;
export const LEAD_NOTES_MAX = 5000;
export const LEAD_TAGS_MAX = 20;
export const LEAD_TAG_MAX = 50;
export const LEAD_METADATA_KEYS_MAX = 20;
export const LEAD_METADATA_VALUE_MAX = 500;
/** Longest metadata key (and CSV metadata column name), in characters. */
export const METADATA_KEY_MAX = 100;
/** Keys that mean an object's prototype to JavaScript: never metadata keys. */
export const RESERVED_METADATA_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/**
 * The keys of any `metadata` object (leads, outbound calls, SMS): at most METADATA_KEY_MAX
 * characters, no NUL, and none of RESERVED_METADATA_KEYS.
 */
export const metadataKeySchema = {
  type: 'string',
  maxLength: METADATA_KEY_MAX,
  pattern: NO_NUL,
  not: { enum: RESERVED_METADATA_KEYS },
  'x-error-message': `metadata keys must be at most ${METADATA_KEY_MAX} characters and not ${RESERVED_METADATA_KEYS.join(', ')}`,
} as const;

export const leadFieldSchemas = {
  name: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: LEAD_NAME_MAX,
    pattern: NO_NUL,
    'x-error-message': `name must be a string of 1 to ${LEAD_NAME_MAX} characters, or null`,
  },
  phone: {
    type: ['string', 'null'],
    maxLength: 16,
    description: 'E.164, e.g. +14155550123; one lead per phone per tenant',
    'x-error-message': 'phone must be a valid phone number in E.164 format, e.g. +14155550123',
  },
  email: {
    type: ['string', 'null'],
    maxLength: 254,
    format: 'email',
    'x-error-message': 'email must be a valid email address of at most 254 characters, or null',
  },
  status: {
    enum: ['new', 'contacted', 'qualified', 'won', 'lost'],
    description: 'new (default), contacted, qualified, won or lost',
  },
  notes: {
    type: ['string', 'null'],
    maxLength: LEAD_NOTES_MAX,
    pattern: NO_NUL,
    'x-error-message': `notes must be a string of at most ${LEAD_NOTES_MAX} characters, or null`,
  },
  tags: {
    type: 'array',
    maxItems: LEAD_TAGS_MAX,
    items: {
      type: 'string',
      minLength: 1,
      maxLength: LEAD_TAG_MAX,
      pattern: NO_NUL,
      'x-error-message': `tags must be strings of 1 to ${LEAD_TAG_MAX} characters`,
    },
    description: `Up to ${LEAD_TAGS_MAX} tags; duplicates are kept once`,
    'x-error-message': `tags must be an array of at most ${LEAD_TAGS_MAX} strings`,
  },
  metadata: {
    type: 'object',
    maxProperties: LEAD_METADATA_KEYS_MAX,
    propertyNames: metadataKeySchema,
    additionalProperties: {
      type: 'string',
      maxLength: LEAD_METADATA_VALUE_MAX,
      pattern: NO_NUL,
      'x-error-message': `metadata values must be strings of at most ${LEAD_METADATA_VALUE_MAX} characters`,
    },
    description: `Up to ${LEAD_METADATA_KEYS_MAX} string values; replaced as a whole by PATCH`,
    'x-error-message': `metadata must be an object of at most ${LEAD_METADATA_KEYS_MAX} string values`,
  },
  receptionist_id: {
    type: ['string', 'null'],
    pattern: '^rcp_[A-Za-z0-9]{1,64}$',
    'x-error-message': 'receptionist_id must be a receptionist id (rcp_...) or null',
  },
} as const;

/** POST /leads: every writable field; a phone or an email is required (checked after). */
export const createLeadBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: leadFieldSchemas,
} as const;

/** PATCH /leads/{id}: any writable field, at least one. */
export const updateLeadBodySchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  'x-error-message': `Send at least one of ${Object.keys(leadFieldSchemas).join(', ')}`,
  properties: leadFieldSchemas,
} as const;
