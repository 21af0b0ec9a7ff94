import { nullableTimestamp, timestamp } from './common';

/** Event names: lowercase dotted words (`call.completed`); unknown names are accepted. */
export const EVENT_NAME_PATTERN = '^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)+$';

/** Path parameter of every /webhooks/{id} route: subscription ids are plain UUIDs. */
export const webhookIdParamSchema = {
  type: 'object',
  required: ['id'],
  properties: {
    id: {
      type: 'string',
      format: 'uuid',
      pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      description: 'Subscription id (UUID)',
    },
  },
} as const;

/** Body of POST /webhooks (CONTRACT.md section 6). The URL policy runs after this schema. */
export const createWebhookBodySchema = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: {
      type: 'string',
      maxLength: 2048,
      description:
        'Absolute https:// URL without user-info; its host must resolve to public addresses',
    },
    events: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', pattern: EVENT_NAME_PATTERN },
      description: 'Event names to deliver; omitted or empty means every event',
    },
    description: { type: ['string', 'null'], maxLength: 500 },
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
  disabled_reason: { enum: ['consecutive_failures', null] },
  consecutive_failures: { type: 'integer', minimum: 0 },
  last_delivery_at: nullableTimestamp,
  last_success_at: nullableTimestamp,
  last_failure_at: nullableTimestamp,
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
  'last_delivery_at',
  'last_success_at',
  'last_failure_at',
] as const;

/** The read shape (list and get): never carries the signing secret. */
export const webhookSubscriptionSchema = {
  type: 'object',
  required: readRequired,
  additionalProperties: false,
  properties: readProperties,
} as const;

/** The create response: the read shape plus the secret, shown this once. */
export const createdWebhookSubscriptionSchema = {
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
      },
    },
  },
} as const;
