import type { FromSchema } from 'json-schema-to-ts';
import { EVENT_NAME_PATTERN, livemode, nullableTimestamp, timestamp } from '../../shared/schemas';
import { etagHeaderDoc } from '../../http/if-match';

/** 1 to 1,000 attempts per second across every worker, or null for unlimited. */
const rateLimitSchema = {
  type: ['integer', 'null'],
  minimum: 1,
  maximum: 1000,
  description:
    'Attempts per second to this endpoint, across every worker; null = unlimited. Deliveries ' +
    'over the rate wait for their turn: never refused, never counted as failures',
} as const;

const createWebhookBodySchemaUrl = {
  type: 'string',
  maxLength: 2048,
  description: 'Absolute https:// URL without user-info; its host must resolve to public addresses',
} as const;

const createWebhookBodySchemaEvents = {
  type: 'array',
  maxItems: 100,
  items: { type: 'string', pattern: EVENT_NAME_PATTERN },
  description: 'Event names to deliver; omitted or empty means every event',
} as const;

/** Body of POST /webhooks (docs/API.md, Webhooks). The URL policy runs after this schema. */
export const createWebhookBodySchema = {
  title: 'WebhookSubscriptionCreate',
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: createWebhookBodySchemaUrl,
    events: createWebhookBodySchemaEvents,
    description: { type: ['string', 'null'], maxLength: 500 },
    rate_limit_per_second: rateLimitSchema,
  },
} as const;

/** Body of PATCH /webhooks/{id}: any of the fields, at least one; `url` is checked as at creation. */
export const patchWebhookBodySchema = {
  title: 'WebhookSubscriptionPatch',
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: {
    url: createWebhookBodySchemaUrl,
    events: createWebhookBodySchemaEvents,
    description: { type: ['string', 'null'], maxLength: 500 },
    is_active: {
      type: 'boolean',
      description:
        'false pauses (disabled_reason manual: deliveries wait and go out on resume); true ' +
        'enables and zeroes the failure counter',
    },
    rate_limit_per_second: rateLimitSchema,
  },
} as const;

/** Body of POST /webhooks/{id}/rotate-secret. */
export const rotateSecretBodySchema = {
  title: 'WebhookSecretRotation',
  type: 'object',
  additionalProperties: false,
  properties: {
    overlap_seconds: {
      type: 'integer',
      minimum: 0,
      maximum: 604800,
      default: 86400,
      description:
        'How long the previous secret keeps signing deliveries next to the new one (0 = ends now)',
    },
  },
} as const;

/** Answer of POST /webhooks/{id}/rotate-secret: the new secret, shown this once. */
export const rotatedSecretSchema = {
  title: 'WebhookRotatedSecret',
  type: 'object',
  required: ['id', 'signing_secret', 'previous_secret_expires_at', '_warning'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', format: 'uuid' },
    signing_secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
      description: 'The new secret; returned only in this response',
    },
    previous_secret_expires_at: {
      ...nullableTimestamp,
      description: 'End of the overlap; null when the previous secret was dropped at once',
    },
    _warning: { type: 'string' },
  },
} as const;

const readProperties = {
  id: { type: 'string', format: 'uuid' },
  url: { type: 'string' },
  events: { type: 'array', items: { type: 'string' } },
  description: { type: ['string', 'null'] },
  is_active: { type: 'boolean' },
  created_at: timestamp,
  updated_at: timestamp,
  disabled_at: nullableTimestamp,
  disabled_reason: {
    enum: ['consecutive_failures', 'manual', null],
    description: 'consecutive_failures (disabled by the service) or manual (paused by PATCH)',
  },
  consecutive_failures: { type: 'integer', minimum: 0 },
  failing: {
    type: 'boolean',
    description:
      'Active, and the failures in a row have reached half of the disable threshold ' +
      '(webhook.failing was sent); false again at the next success or when re-enabled',
  },
  last_delivery_at: nullableTimestamp,
  last_success_at: nullableTimestamp,
  last_failure_at: nullableTimestamp,
  rate_limit_per_second: {
    type: ['integer', 'null'],
    description:
      'Attempts per second across every worker; null = unlimited. Deliveries over the rate ' +
      'wait for their turn (never failures)',
  },
  secret_overlap_ends_at: {
    ...nullableTimestamp,
    description: 'Until then deliveries carry a signature with the previous secret too',
  },
  livemode: {
    ...livemode,
    description: 'false: a test-mode subscription, which receives test-mode events only',
  },
} as const;

const readRequired = [
  'id',
  'url',
  'events',
  'description',
  'is_active',
  'created_at',
  'updated_at',
  'disabled_at',
  'disabled_reason',
  'consecutive_failures',
  'failing',
  'last_delivery_at',
  'last_success_at',
  'last_failure_at',
  'rate_limit_per_second',
  'secret_overlap_ends_at',
  'livemode',
] as const;

/** The read shape (list and get): never carries the signing secret. */
export const webhookSubscriptionSchema = {
  title: 'WebhookSubscription',
  type: 'object',
  required: readRequired,
  additionalProperties: false,
  properties: readProperties,
} as const;

/** The create response: the read shape plus the secret, shown this once. */
export const createdWebhookSubscriptionSchema = {
  title: 'CreatedWebhookSubscription',
  type: 'object',
  required: [...readRequired, 'signing_secret', '_warning'],
  additionalProperties: false,
  properties: {
    ...readProperties,
    signing_secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
      description: 'whsec_ + base64 of 32 random bytes; returned only in this response',
    },
    _warning: { type: 'string' },
  },
} as const;

/** Result of POST /webhooks/{id}/test: one attempt, reported whether it succeeded or not. */
export const webhookTestResultSchema = {
  title: 'WebhookTestResult',
  type: 'object',
  required: [
    'subscription_id',
    'event_id',
    'delivered',
    'status_code',
    'error',
    'signature_header',
    'timestamp_header',
    'payload',
  ],
  additionalProperties: false,
  properties: {
    subscription_id: { type: 'string', format: 'uuid' },
    event_id: { type: 'string', pattern: '^evt_' },
    delivered: { type: 'boolean' },
    status_code: {
      type: ['integer', 'null'],
      description: 'Status returned by the destination; null when no HTTP response came back',
    },
    error: {
      type: ['string', 'null'],
      description:
        'null on success, else timeout, connection_refused, tls_error, blocked_address, ' +
        'dns_error, invalid_url, redirect, http_error or network_error',
    },
    signature_header: { const: 'x-service-signature' },
    timestamp_header: { const: 'x-service-timestamp' },
    payload: {
      type: 'object',
      required: ['id', 'type', 'event', 'data', 'timestamp'],
      properties: {
        id: { type: 'string', pattern: '^evt_' },
        type: { const: 'webhook.test' },
        event: { const: 'webhook.test' },
        data: {
          type: 'object',
          required: ['subscription_id', 'message'],
          properties: { subscription_id: { type: 'string' }, message: { type: 'string' } },
        },
        timestamp,
        livemode,
      },
    },
  },
} as const;

export const createWebhookBodyExample: FromSchema<typeof createWebhookBodySchema> = {
  url: 'https://example.com/hooks/switchboard',
  events: ['call.completed', 'call.missed'],
  description: 'CRM sync',
};

export const webhookSubscriptionExample: FromSchema<typeof webhookSubscriptionSchema> = {
  id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
  url: 'https://example.com/hooks/switchboard',
  events: ['call.completed', 'call.missed'],
  description: 'CRM sync',
  is_active: true,
  created_at: '2026-11-20T09:30:00.000Z',
  updated_at: '2026-11-20T09:30:00.000Z',
  disabled_at: null,
  disabled_reason: null,
  consecutive_failures: 0,
  failing: false,
  last_delivery_at: '2026-11-21T10:16:36.000Z',
  last_success_at: '2026-11-21T10:16:36.000Z',
  last_failure_at: null,
  rate_limit_per_second: null,
  secret_overlap_ends_at: null,
  livemode: true,
};

/** The 200 of a route that answers with one subscription (never its secret). */
/** A 200 holding one subscription, with its version in ETag (http/if-match.ts). */
export const subscriptionAnswer = (description: string) => ({
  200: {
    description,
    schema: webhookSubscriptionSchema,
    example: webhookSubscriptionExample,
    headers: etagHeaderDoc,
  },
});

export const patchWebhookBodyExample: FromSchema<typeof patchWebhookBodySchema> = {
  url: 'https://example.com/hooks/switchboard-v2',
  is_active: false,
  rate_limit_per_second: 50,
};

export const rotatedSecretExample: FromSchema<typeof rotatedSecretSchema> = {
  id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
  signing_secret: 'whsec_Zq1lJ3m4N5o6P7q8R9s0T1u2V3w4X5y6Z7a8B9c0D1e=',
  previous_secret_expires_at: '2026-11-22T10:30:00.000Z',
  _warning: 'Store this secret now: it is shown only once.',
};

export const createdWebhookSubscriptionExample: FromSchema<
  typeof createdWebhookSubscriptionSchema
> = {
  ...webhookSubscriptionExample,
  last_delivery_at: null,
  last_success_at: null,
  signing_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw5mq6bH2Ew3o=',
  _warning: 'Store this secret now: it is shown only once.',
};

export const webhookTestResultExample: FromSchema<typeof webhookTestResultSchema> = {
  subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
  event_id: 'evt_2Df5gH8jK1lZ',
  delivered: true,
  status_code: 200,
  error: null,
  signature_header: 'x-service-signature',
  timestamp_header: 'x-service-timestamp',
  payload: {
    id: 'evt_2Df5gH8jK1lZ',
    type: 'webhook.test',
    event: 'webhook.test',
    data: {
      subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
      message: 'This is a test event from Switchboard.',
    },
    timestamp: '2026-11-21T10:30:00.000Z',
    livemode: true,
  },
};
