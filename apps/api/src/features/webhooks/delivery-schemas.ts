import type { FromSchema } from 'json-schema-to-ts';
import { nullableTimestamp, timestamp } from '../../shared/schemas';
import { webhookIdParamSchema } from './schemas';

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
      description: 'The first 1 KiB of the response body',
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
