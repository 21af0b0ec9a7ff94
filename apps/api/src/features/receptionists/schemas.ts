import type { FromSchema } from 'json-schema-to-ts';
import { nullableTimestamp, timestamp } from '../../shared/schemas';

// NUL is refused for every text field by the validation layer; names must not be blank.
const NOT_BLANK = '\\S';

/** Plans a receptionist can be created on (docs/API.md, Receptionists). */
export const PLANS = ['starter', 'standard', 'pro'] as const;

export const receptionistSchema = {
  title: 'Receptionist',
  type: 'object',
  required: [
    'id',
    'name',
    'status',
    'phone_number',
    'assistant_id',
    'plan',
    'greeting',
    'webhook_url',
    'error',
    'created_at',
    'provisioned_at',
  ],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    status: { enum: ['provisioning', 'ready', 'error'] },
    phone_number: { type: ['string', 'null'] },
    assistant_id: { type: ['string', 'null'] },
    plan: { type: 'string' },
    greeting: { type: ['string', 'null'] },
    webhook_url: { type: ['string', 'null'] },
    error: {
      description: 'Why provisioning failed (status error), else null',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['code', 'message', 'failed_at'],
          properties: {
            code: { type: 'string' },
            message: { type: 'string' },
            failed_at: timestamp,
          },
        },
      ],
    },
    created_at: timestamp,
    provisioned_at: nullableTimestamp,
  },
} as const;

/** Body of POST /receptionists; unknown fields are a 400. */
export const createReceptionistBodySchema = {
  title: 'ReceptionistCreate',
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      pattern: NOT_BLANK,
      'x-error-message': 'name must be a string of 1 to 100 characters, not only spaces',
    },
    greeting: {
      type: ['string', 'null'],
      maxLength: 500,
      description: 'What the assistant says when it answers',
      'x-error-message': 'greeting must be a string of at most 500 characters, or null',
    },
    area_code: {
      type: 'string',
      pattern: '^[2-9][0-9]{2}$',
      description: 'A 3-digit US area code for the number; any US number when omitted',
      'x-error-message': 'area_code must be a 3-digit US area code, e.g. "415"',
    },
    plan: {
      enum: PLANS,
      default: 'standard',
      description: 'starter, standard (default) or pro',
      'x-error-message': `plan must be one of ${PLANS.join(', ')}`,
    },
  },
} as const;

/**
 * Body of PATCH /receptionists/{id}: at least one field. `webhook_url` needs the admin scope
 * and, when not null, passes the subscription URL policy after this schema.
 */
export const updateReceptionistBodySchema = {
  title: 'ReceptionistUpdate',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  'x-error-message': 'Send at least one of name, greeting, webhook_url',
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      pattern: NOT_BLANK,
      'x-error-message': 'name must be a string of 1 to 200 characters, not only spaces',
    },
    greeting: {
      type: ['string', 'null'],
      maxLength: 1000,
      'x-error-message': 'greeting must be a string of at most 1000 characters, or null',
    },
    webhook_url: {
      type: ['string', 'null'],
      maxLength: 2048,
      description:
        'Legacy per-receptionist webhook (admin scope): an https:// URL resolving to public ' +
        'addresses, or null to clear it. Its signing secret is never returned.',
      'x-error-message': 'webhook_url must be an https:// URL of at most 2048 characters, or null',
    },
  },
} as const;

export const receptionistExample: FromSchema<typeof receptionistSchema> = {
  id: 'rcp_7Hq2Lm9Xc4Tz',
  name: 'Front Desk',
  status: 'ready',
  phone_number: '+14155550199',
  assistant_id: 'asst_4Tg7hJ2kL9mN',
  plan: 'standard',
  greeting: 'Thanks for calling Acme Plumbing, how can I help?',
  webhook_url: null,
  error: null,
  created_at: '2026-11-20T09:00:00.000Z',
  provisioned_at: '2026-11-20T09:00:01.000Z',
};

export const provisioningReceptionistExample: FromSchema<typeof receptionistSchema> = {
  ...receptionistExample,
  status: 'provisioning',
  phone_number: null,
  assistant_id: null,
  provisioned_at: null,
};

export const createReceptionistExample: FromSchema<typeof createReceptionistBodySchema> = {
  name: 'Front Desk',
  greeting: 'Thanks for calling Acme Plumbing, how can I help?',
  area_code: '415',
  plan: 'standard',
};

export const updateReceptionistExample: FromSchema<typeof updateReceptionistBodySchema> = {
  name: 'Front Desk (evenings)',
  greeting: 'Thanks for calling Acme Plumbing after hours, how can I help?',
};
