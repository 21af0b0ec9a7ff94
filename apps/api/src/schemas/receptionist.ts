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
