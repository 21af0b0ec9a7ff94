import type { FromSchema } from 'json-schema-to-ts';
import { livemode, metadataSchema, phoneNumber, timestamp } from '../../shared/schemas';

/** The body of POST /calls/outbound (docs/API.md, Outbound calls); unknown fields are a 400. */
export const outboundCallBodySchema = {
  title: 'OutboundCallRequest',
  type: 'object',
  required: ['receptionist_id', 'to'],
  additionalProperties: false,
  properties: {
    receptionist_id: {
      type: 'string',
      pattern: '^rcp_[A-Za-z0-9]{1,64}$',
      'x-error-message': 'receptionist_id must be a receptionist id (rcp_...)',
    },
    to: phoneNumber('to', 'The number to call'),
    customer_name: { type: 'string', minLength: 1, maxLength: 200 },
    purpose: {
      type: 'string',
      maxLength: 2000,
      description: 'What the call is about, for the assistant',
      'x-error-message': 'purpose must be a string of at most 2000 characters',
    },
    metadata: metadataSchema,
  },
} as const;

/** The 202 body: the queued call. */
export const acceptedOutboundCallSchema = {
  title: 'QueuedOutboundCall',
  type: 'object',
  required: [
    'id',
    'status',
    'direction',
    'receptionist_id',
    'from',
    'to',
    'customer_name',
    'created_at',
    'livemode',
  ],
  properties: {
    id: { type: 'string' },
    status: { const: 'queued' },
    direction: { const: 'outbound' },
    receptionist_id: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    customer_name: { type: ['string', 'null'] },
    created_at: timestamp,
    livemode,
  },
} as const;

export const outboundCallBodyExample: FromSchema<typeof outboundCallBodySchema> = {
  receptionist_id: 'rcp_7Hq2Lm9Xc4Tz',
  to: '+14155550123',
  customer_name: 'Dana Whitfield',
  purpose: 'Follow up on the boiler quote',
  metadata: { crm_id: 'c-42' },
};

export const acceptedOutboundCallExample: FromSchema<typeof acceptedOutboundCallSchema> = {
  id: 'call_b693Xk2mQ7pL4sN1',
  status: 'queued',
  direction: 'outbound',
  receptionist_id: 'rcp_7Hq2Lm9Xc4Tz',
  from: '+14155550199',
  to: '+14155550123',
  customer_name: 'Dana Whitfield',
  created_at: '2026-11-21T10:20:00.000Z',
  livemode: true,
};
