import { bookingSchema, CALL_OUTCOMES, END_REASONS } from '@switchboard/db';
import { E164_PATTERN } from '@switchboard/phone';

/**
 * Telephony messages (docs/API.md, Telephony ingestion): what the voice platform reports,
 * one JSON message per request. Sub-shapes are those of the call detail (docs/API.md, Calls).
 */
const phone = { type: 'string', pattern: E164_PATTERN } as const;
const ts = { type: 'string', format: 'date-time' } as const;
const id = { type: 'string', minLength: 1, maxLength: 200 } as const;
const text = (max: number) => ({ type: 'string', maxLength: max }) as const;
const money = { type: 'number', minimum: 0, maximum: 1e9 } as const;

export const transcriptSchema = {
  type: 'object',
  required: ['summary', 'turns'],
  additionalProperties: false,
  properties: {
    summary: text(10_000),
    turns: {
      type: 'array',
      maxItems: 2000,
      items: {
        type: 'object',
        required: ['role', 'text', 'offset_seconds'],
        additionalProperties: false,
        properties: {
          role: { enum: ['assistant', 'customer'] },
          text: text(10_000),
          offset_seconds: { type: 'number', minimum: 0 },
        },
      },
    },
  },
} as const;

export const recordingSchema = {
  type: 'object',
  required: ['url', 'duration_seconds', 'format'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', format: 'uri', pattern: '^https://', maxLength: 2048 },
    duration_seconds: { type: 'number', minimum: 0 },
    format: { type: 'string', maxLength: 20 },
  },
} as const;

export const costSchema = {
  type: 'object',
  required: ['currency', 'total', 'breakdown'],
  additionalProperties: false,
  properties: {
    currency: { const: 'USD' },
    total: money,
    breakdown: {
      type: 'object',
      required: ['telephony', 'ai', 'sms'],
      additionalProperties: false,
      properties: { telephony: money, ai: money, sms: money },
    },
  },
} as const;

const common = {
  id,
  receptionist_id: { type: 'string', pattern: '^rcp_[A-Za-z0-9]{1,64}$' },
  from: phone,
  to: phone,
  occurred_at: ts,
} as const;

/** Fields every message carries. */
const COMMON_REQUIRED = ['id', 'type', 'receptionist_id', 'from', 'to', 'occurred_at'] as const;

export const callStartedMessage = {
  type: 'object',
  required: [...COMMON_REQUIRED, 'provider_call_id', 'direction'],
  additionalProperties: false,
  properties: {
    ...common,
    type: { const: 'call.started' },
    provider_call_id: id,
    direction: { enum: ['inbound', 'outbound'] },
    customer_name: text(200),
  },
} as const;

export const callEndedMessage = {
  type: 'object',
  required: [
    ...COMMON_REQUIRED,
    'provider_call_id',
    'direction',
    'started_at',
    'duration_seconds',
    'outcome',
    'end_reason',
  ],
  additionalProperties: false,
  properties: {
    ...common,
    type: { const: 'call.ended' },
    provider_call_id: id,
    direction: { enum: ['inbound', 'outbound'] },
    customer_name: text(200),
    customer_phone: phone,
    started_at: ts,
    answered_at: ts,
    duration_seconds: { type: 'integer', minimum: 0, maximum: 86_400 },
    outcome: { enum: CALL_OUTCOMES },
    end_reason: { enum: END_REASONS },
    transcript: transcriptSchema,
    recording: recordingSchema,
    booking: bookingSchema,
    cost: costSchema,
  },
} as const;

export const callMissedMessage = {
  type: 'object',
  required: [...COMMON_REQUIRED, 'provider_call_id', 'started_at', 'reason', 'recovery_scheduled'],
  additionalProperties: false,
  properties: {
    ...common,
    type: { const: 'call.missed' },
    provider_call_id: id,
    started_at: ts,
    reason: { enum: ['no_ai_answer', 'abandoned'] },
    recovery_scheduled: { type: 'boolean' },
  },
} as const;

export const smsInboundMessage = {
  type: 'object',
  required: [...COMMON_REQUIRED, 'provider_message_id', 'message'],
  additionalProperties: false,
  properties: {
    ...common,
    type: { const: 'sms.inbound' },
    provider_message_id: id,
    message: text(1600),
  },
} as const;

/** A carrier's delivery receipt for an outbound message (no from/to: the receipt names the message). */
export const smsStatusMessage = {
  type: 'object',
  required: ['id', 'type', 'receptionist_id', 'provider_message_id', 'status', 'occurred_at'],
  additionalProperties: false,
  properties: {
    id,
    type: { const: 'sms.status' },
    receptionist_id: common.receptionist_id,
    provider_message_id: id,
    status: { enum: ['delivered', 'undelivered'] },
    error_code: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' },
    occurred_at: ts,
  },
} as const;

export const MESSAGE_SCHEMAS = {
  'call.started': callStartedMessage,
  'call.ended': callEndedMessage,
  'call.missed': callMissedMessage,
  'sms.inbound': smsInboundMessage,
  'sms.status': smsStatusMessage,
} as const;

export type MessageType = keyof typeof MESSAGE_SCHEMAS;

/** The request body schema: one of the message shapes, chosen by `type`. */
export const telephonyMessageSchema = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: Object.keys(MESSAGE_SCHEMAS) } },
  oneOf: Object.values(MESSAGE_SCHEMAS),
  discriminator: { propertyName: 'type' },
} as const;
