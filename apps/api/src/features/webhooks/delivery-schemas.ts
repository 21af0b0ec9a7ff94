import type { FromSchema } from 'json-schema-to-ts';
import { nullableTimestamp, pageQuerySchema, timestamp } from '../../shared/schemas';
import { webhookIdParamSchema } from '../../shared/schemas';

/** Path of the delivery log: the subscription (UUID). */
export const webhookDeliveriesParamSchema = webhookIdParamSchema;

/** Path of a manual retry: the subscription (UUID) and one of its deliveries (`dlv_…`). */
export const webhookDeliveryParamSchema = {
  type: 'object',
  required: ['id', 'delivery_id'],
  properties: {
    id: webhookIdParamSchema.properties.id,
    delivery_id: {
      type: 'string',
      pattern: '^dlv_[A-Za-z0-9]{1,64}$',
      description: 'Delivery id (dlv_ prefix)',
    },
  },
} as const;

/** One HTTP attempt. Attempt numbers restart at 1 in every round (a manual retry = a round). */
export const deliveryAttemptSchema = {
  title: 'WebhookDeliveryAttempt',
  type: 'object',
  required: [
    'round',
    'attempt',
    'status_code',
    'error',
    'duration_ms',
    'response_excerpt',
    'attempted_at',
  ],
  additionalProperties: false,
  properties: {
    round: { type: 'integer', minimum: 1, description: '1 = the original delivery' },
    attempt: { type: 'integer', minimum: 1, description: 'Attempt number within its round' },
    status_code: {
      type: ['integer', 'null'],
      description: 'null when no HTTP response came back',
    },
    error: {
      type: ['string', 'null'],
      description: 'null on success, else timeout, connection_refused, tls_error, ...',
    },
    duration_ms: { type: 'integer', minimum: 0 },
    response_excerpt: {
      type: ['string', 'null'],
      description: 'The first 4 KiB of the response body (NUL replaced by U+FFFD)',
    },
    attempted_at: timestamp,
  },
} as const;

/** An item of the delivery log, and the answer of a manual retry. */
export const webhookDeliverySchema = {
  title: 'WebhookDelivery',
  type: 'object',
  required: [
    'id',
    'subscription_id',
    'event_id',
    'event_type',
    'status',
    'round',
    'attempts',
    'next_attempt_at',
    'created_at',
    'completed_at',
  ],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^dlv_' },
    subscription_id: { type: 'string', format: 'uuid' },
    event_id: { type: 'string', pattern: '^evt_' },
    event_type: { type: 'string' },
    status: { enum: ['pending', 'delivering', 'succeeded', 'failed', 'canceled'] },
    round: {
      type: 'integer',
      minimum: 1,
      description: 'The current round of attempts; every manual retry starts a new one',
    },
    attempts: {
      type: 'array',
      items: deliveryAttemptSchema,
      description: 'Every attempt of every round, oldest first',
    },
    next_attempt_at: {
      ...nullableTimestamp,
      description: 'When the next attempt is due; null once the delivery is final',
    },
    created_at: timestamp,
    completed_at: nullableTimestamp,
  },
} as const;

export const webhookDeliveryExample: FromSchema<typeof webhookDeliverySchema> = {
  id: 'dlv_5Rt8yU1iO4pA',
  subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
  event_id: 'evt_9Xa2bC4dE6fG8hJ0',
  event_type: 'call.completed',
  status: 'succeeded',
  round: 1,
  attempts: [
    {
      round: 1,
      attempt: 1,
      status_code: 503,
      error: 'http_error',
      duration_ms: 182,
      response_excerpt: 'Service Unavailable',
      attempted_at: '2026-11-21T10:16:35.200Z',
    },
    {
      round: 1,
      attempt: 2,
      status_code: 200,
      error: null,
      duration_ms: 95,
      response_excerpt: 'ok',
      attempted_at: '2026-11-21T10:16:36.310Z',
    },
  ],
  next_attempt_at: null,
  created_at: '2026-11-21T10:16:35.100Z',
  completed_at: '2026-11-21T10:16:36.405Z',
};

/** The answer of a manual retry: the same delivery, a new round, pending. */
export const retriedWebhookDeliveryExample: FromSchema<typeof webhookDeliverySchema> = {
  ...webhookDeliveryExample,
  status: 'pending',
  round: 2,
  next_attempt_at: '2026-11-21T11:00:00.000Z',
  completed_at: null,
};

const isoInstant = {
  type: 'string',
  format: 'date-time',
  'x-error-message': 'must be an ISO 8601 date-time, e.g. 2026-11-21T10:15:00Z',
} as const;

/** Filters of the delivery logs (docs/API.md, Webhooks). */
export const deliveryFilterProperties = {
  status: {
    enum: ['pending', 'succeeded', 'failed', 'cancelled', 'canceled'],
    description:
      'pending (includes an attempt in flight), succeeded, failed, or cancelled (also spelled ' +
      'canceled, as the status field shows it)',
  },
  event: { type: 'string', maxLength: 200, description: 'Event name, e.g. call.completed' },
  since: { ...isoInstant, description: 'Created at or after this time' },
  until: { ...isoInstant, description: 'Created before this time' },
} as const;

/** Query of GET /webhooks/{id}/deliveries: a page and the filters. */
export const deliveryLogQuerySchema = {
  type: 'object',
  properties: { ...pageQuerySchema.properties, ...deliveryFilterProperties },
} as const;

/** Query of GET /webhook-deliveries: the same, plus one subscription. */
export const tenantDeliveryLogQuerySchema = {
  type: 'object',
  properties: {
    ...deliveryLogQuerySchema.properties,
    subscription_id: { type: 'string', format: 'uuid', description: 'One subscription only' },
  },
} as const;

const headerMap = {
  type: ['object', 'null'],
  additionalProperties: { type: 'string' },
} as const;

/** GET /webhooks/{id}/deliveries/{delivery_id}: what was signed, sent, and answered. */
export const webhookDeliveryDetailSchema = {
  title: 'WebhookDeliveryDetail',
  type: 'object',
  required: [
    'id',
    'subscription_id',
    'event_id',
    'event',
    'status',
    'payload',
    'attempts',
    'created_at',
    'completed_at',
  ],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^dlv_' },
    subscription_id: { type: 'string', format: 'uuid' },
    event_id: { type: 'string', pattern: '^evt_' },
    event: { type: 'string' },
    status: webhookDeliverySchema.properties.status,
    payload: {
      type: 'object',
      description: 'The envelope exactly as signed and sent (JSON.stringify of it is the body)',
    },
    attempts: {
      type: 'array',
      description: 'Every attempt of every round, oldest first',
      items: {
        type: 'object',
        required: [
          'round',
          'attempt',
          'attempted_at',
          'duration_ms',
          'request_headers',
          'status_code',
          'response_headers',
          'response_excerpt',
          'error',
        ],
        additionalProperties: false,
        properties: {
          ...deliveryAttemptSchema.properties,
          request_headers: {
            ...headerMap,
            description: 'Headers sent, signatures included (never the secret)',
          },
          response_headers: {
            ...headerMap,
            description: 'Headers received (lowercase, at most 50); null without a response',
          },
        },
      },
    },
    created_at: timestamp,
    completed_at: nullableTimestamp,
  },
} as const;

export const webhookDeliveryDetailExample: FromSchema<typeof webhookDeliveryDetailSchema> = {
  id: 'dlv_5Rt8yU1iO4pA',
  subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
  event_id: 'evt_9Xa2bC4dE6fG8hJ0',
  event: 'call.started',
  status: 'succeeded',
  payload: {
    id: 'evt_9Xa2bC4dE6fG8hJ0',
    event: 'call.started',
    receptionist_id: 'rcp_8Jk2mN4pQ6',
    data: { call_id: 'call_3Fh7', direction: 'inbound' },
    timestamp: '2026-11-21T10:16:35.000Z',
    livemode: true,
  },
  attempts: [
    {
      round: 1,
      attempt: 1,
      attempted_at: '2026-11-21T10:16:35.200Z',
      duration_ms: 95,
      request_headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'Switchboard-Webhooks/1',
        'webhook-id': 'evt_9Xa2bC4dE6fG8hJ0',
        'webhook-timestamp': '1763720195',
        'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
      },
      status_code: 200,
      response_headers: { 'content-type': 'text/plain' },
      response_excerpt: 'ok',
      error: null,
    },
  ],
  created_at: '2026-11-21T10:16:35.100Z',
  completed_at: '2026-11-21T10:16:35.300Z',
};
