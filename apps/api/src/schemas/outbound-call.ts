import { timestamp } from './common';

/** The body of POST /calls/outbound (CONTRACT.md section 5); unknown fields are a 400. */
export const outboundCallBodySchema = {
  type: 'object',
  required: ['receptionist_id', 'to'],
  additionalProperties: false,
  properties: {
    receptionist_id: {
      type: 'string',
      pattern: '^rcp_[A-Za-z0-9]{1,64}$',
      'x-error-message': 'receptionist_id must be a receptionist id (rcp_...)',
    },
    to: {
      type: 'string',
      pattern: '^\\+[1-9]\\d{6,14}$',
      description: 'The number to call, E.164 (e.g. +14155550123)',
      'x-error-message': 'to must be a valid phone number in E.164 format, e.g. +14155550123',
    },
    customer_name: { type: 'string', minLength: 1, maxLength: 200 },
    purpose: {
      type: 'string',
      maxLength: 2000,
      description: 'What the call is about, for the assistant',
      'x-error-message': 'purpose must be a string of at most 2000 characters',
    },
    metadata: {
      type: 'object',
      maxProperties: 20,
      additionalProperties: {
        type: 'string',
        maxLength: 500,
        'x-error-message': 'metadata values must be strings of at most 500 characters',
      },
      description: 'Up to 20 string values of up to 500 characters, returned in the call detail',
      'x-error-message': 'metadata must be an object of at most 20 string values',
    },
  },
} as const;

/** The 202 body: the queued call. */
export const acceptedOutboundCallSchema = {
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
  },
} as const;
