import { bookingSchema, CALL_OUTCOMES, LEAD_SOURCES, LEAD_STATUSES } from '@switchboard/db';
import { E164_PATTERN } from '@switchboard/phone';

/**
 * Every event the service emits, with the JSON Schema of its `data` (docs/API.md, Webhooks;
 * the OpenAPI document's `webhooks` section is generated from this). Names are public: never
 * rename one. Required fields are always present; nullable ones are sent as null rather than
 * omitted.
 */
const ts = { type: 'string', format: 'date-time' } as const;
const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const phone = { type: 'string', pattern: E164_PATTERN } as const;

const lead = {
  lead_id: str,
  name: nullableStr,
  phone: { type: ['string', 'null'] },
  email: nullableStr,
  source: { enum: LEAD_SOURCES },
  status: { enum: LEAD_STATUSES },
} as const;

export const EVENT_DATA_SCHEMAS = {
  'call.started': {
    type: 'object',
    required: ['call_id', 'direction', 'from', 'to', 'started_at'],
    properties: {
      call_id: str,
      direction: { enum: ['inbound', 'outbound'] },
      from: phone,
      to: phone,
      started_at: ts,
    },
    additionalProperties: false,
  },
  'call.completed': {
    type: 'object',
    required: [
      'call_id',
      'direction',
      'from',
      'to',
      'duration_seconds',
      'outcome',
      'customer_name',
      'customer_phone',
      'transcript_summary',
      'started_at',
      'ended_at',
    ],
    properties: {
      call_id: str,
      direction: { enum: ['inbound', 'outbound'] },
      from: phone,
      to: phone,
      duration_seconds: { type: 'integer', minimum: 0 },
      outcome: { enum: CALL_OUTCOMES },
      customer_name: nullableStr,
      customer_phone: nullableStr,
      transcript_summary: nullableStr,
      booking: bookingSchema,
      started_at: ts,
      ended_at: ts,
    },
    additionalProperties: false,
  },
  'call.missed': {
    type: 'object',
    required: ['call_id', 'from', 'to', 'missed_at', 'recovery_scheduled'],
    properties: {
      call_id: str,
      from: phone,
      to: phone,
      missed_at: ts,
      recovery_scheduled: { type: 'boolean' },
    },
    additionalProperties: false,
  },
  'sms.received': {
    type: 'object',
    required: ['sms_id', 'from', 'to', 'message', 'received_at', 'is_opt_out'],
    properties: {
      sms_id: str,
      from: phone,
      to: phone,
      message: str,
      received_at: ts,
      is_opt_out: { type: 'boolean' },
    },
    additionalProperties: false,
  },
  'sms.sent': {
    type: 'object',
    required: ['sms_id', 'from', 'to', 'message', 'sent_at', 'campaign_id'],
    properties: {
      sms_id: str,
      from: phone,
      to: phone,
      message: str,
      sent_at: ts,
      campaign_id: nullableStr,
    },
    additionalProperties: false,
  },
  'sms.delivered': {
    type: 'object',
    required: ['sms_id', 'from', 'to', 'delivered_at', 'campaign_id'],
    properties: { sms_id: str, from: phone, to: phone, delivered_at: ts, campaign_id: nullableStr },
    additionalProperties: false,
  },
  'sms.failed': {
    type: 'object',
    required: [
      'sms_id',
      'from',
      'to',
      'status',
      'error_code',
      'error_message',
      'failed_at',
      'campaign_id',
    ],
    properties: {
      sms_id: str,
      from: phone,
      to: phone,
      status: { enum: ['failed', 'undelivered'] },
      error_code: str,
      error_message: str,
      failed_at: ts,
      campaign_id: nullableStr,
    },
    additionalProperties: false,
  },
  'receptionist.ready': {
    type: 'object',
    required: ['phone_number', 'assistant_id', 'plan', 'provisioned_at'],
    properties: { phone_number: phone, assistant_id: str, plan: str, provisioned_at: ts },
    additionalProperties: false,
  },
  'receptionist.error': {
    type: 'object',
    required: ['error_code', 'message', 'failed_at'],
    properties: { error_code: str, message: str, failed_at: ts },
    additionalProperties: false,
  },
  'lead.created': {
    type: 'object',
    required: ['lead_id', 'name', 'phone', 'email', 'source', 'status', 'created_at'],
    properties: { ...lead, created_at: ts },
    additionalProperties: false,
  },
  'lead.updated': {
    type: 'object',
    required: [
      'lead_id',
      'name',
      'phone',
      'email',
      'source',
      'status',
      'updated_at',
      'changed_fields',
    ],
    properties: {
      ...lead,
      updated_at: ts,
      changed_fields: { type: 'array', items: str, minItems: 1 },
    },
    additionalProperties: false,
  },
  'campaign.completed': {
    type: 'object',
    required: [
      'campaign_id',
      'name',
      'recipients',
      'sent',
      'failed',
      'opted_out',
      'delivered',
      'undelivered',
      'skipped',
      'completed_at',
    ],
    properties: {
      campaign_id: str,
      name: str,
      recipients: { type: 'integer', minimum: 0 },
      sent: { type: 'integer', minimum: 0 },
      failed: { type: 'integer', minimum: 0 },
      opted_out: { type: 'integer', minimum: 0 },
      delivered: { type: 'integer', minimum: 0 },
      undelivered: { type: 'integer', minimum: 0 },
      skipped: { type: 'integer', minimum: 0 },
      completed_at: ts,
    },
    additionalProperties: false,
  },
  'usage.threshold': {
    type: 'object',
    required: ['threshold', 'minutes_used', 'minutes_included', 'billing_period_end'],
    properties: {
      threshold: { enum: [80, 100] },
      minutes_used: { type: 'number', minimum: 0 },
      minutes_included: { type: 'number', minimum: 0 },
      billing_period_end: ts,
    },
    additionalProperties: false,
  },
  'webhook.test': {
    type: 'object',
    required: ['subscription_id', 'message'],
    properties: { subscription_id: str, message: str },
    additionalProperties: false,
  },
  'webhook.failing': {
    type: 'object',
    required: [
      'subscription_id',
      'url',
      'consecutive_failures',
      'disable_threshold',
      'last_status_code',
      'last_error',
    ],
    properties: {
      subscription_id: str,
      url: str,
      consecutive_failures: { type: 'integer', minimum: 1 },
      disable_threshold: { type: 'integer', minimum: 1 },
      last_status_code: { type: ['integer', 'null'] },
      last_error: nullableStr,
    },
    additionalProperties: false,
  },
  'webhook.disabled': {
    type: 'object',
    required: ['subscription_id', 'url', 'reason', 'disabled_at', 'pending_cancelled'],
    properties: {
      subscription_id: str,
      url: str,
      reason: { enum: ['consecutive_failures', 'manual'] },
      disabled_at: ts,
      pending_cancelled: { type: 'integer', minimum: 0 },
    },
    additionalProperties: false,
  },
  'webhook.recovered': {
    type: 'object',
    required: ['subscription_id', 'url', 'recovered_at', 'failures_before'],
    properties: {
      subscription_id: str,
      url: str,
      recovered_at: ts,
      failures_before: { type: 'integer', minimum: 0 },
    },
    additionalProperties: false,
  },
  'test_data.deleted': {
    type: 'object',
    required: [
      'deletion_id',
      'calls_deleted',
      'events_deleted',
      'deliveries_deleted',
      'sms_deleted',
      'leads_deleted',
      'campaigns_deleted',
      'requested_at',
      'completed_at',
    ],
    properties: {
      deletion_id: str,
      calls_deleted: { type: 'integer', minimum: 0 },
      events_deleted: { type: 'integer', minimum: 0 },
      deliveries_deleted: { type: 'integer', minimum: 0 },
      sms_deleted: { type: 'integer', minimum: 0 },
      leads_deleted: { type: 'integer', minimum: 0 },
      campaigns_deleted: { type: 'integer', minimum: 0 },
      requested_at: ts,
      completed_at: ts,
    },
    additionalProperties: false,
  },
} as const;

export type EventType = keyof typeof EVENT_DATA_SCHEMAS;
export const EVENT_TYPES = Object.keys(EVENT_DATA_SCHEMAS) as EventType[];

/** Events about the account rather than one receptionist: their envelope has no receptionist_id. */
export const ACCOUNT_LEVEL_EVENTS: ReadonlySet<EventType> = new Set([
  'usage.threshold',
  'webhook.test',
  'webhook.failing',
  'webhook.disabled',
  'webhook.recovered',
  'test_data.deleted',
]);

/**
 * Operational events about one subscription (`data.subscription_id`): fan-out never delivers
 * one to the subscription it is about (a failing endpoint is not told it is failing).
 */
export const SUBSCRIPTION_EVENTS: ReadonlySet<EventType> = new Set([
  'webhook.failing',
  'webhook.disabled',
  'webhook.recovered',
]);

/**
 * Events about something that may or may not belong to a receptionist (a lead made over the
 * API has none): their envelope carries `receptionist_id` only when there is one.
 */
export const RECEPTIONIST_OPTIONAL_EVENTS: ReadonlySet<EventType> = new Set([
  'lead.created',
  'lead.updated',
]);

export const isEventType = (name: string): name is EventType =>
  Object.prototype.hasOwnProperty.call(EVENT_DATA_SCHEMAS, name);
