import { nullableTimestamp, timestamp } from './common';

export const receptionistSchema = {
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
    created_at: timestamp,
    provisioned_at: nullableTimestamp,
  },
} as const;

/**
 * Body of PATCH /receptionists/{id}: at least one field. `webhook_url` needs the admin scope
 * and, when not null, passes the subscription URL policy after this schema.
 */
export const updateReceptionistBodySchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  'x-error-message': 'Send at least one of name, greeting, webhook_url',
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      pattern: '\\S',
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
