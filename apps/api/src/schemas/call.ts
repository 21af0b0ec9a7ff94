import { CALL_STATUSES } from '@switchboard/db';
import {
  bookingSchema,
  costSchema,
  recordingSchema,
  transcriptSchema,
} from '@switchboard/telephony';
import { cursorSchema, limitSchema, nullableTimestamp, timestamp } from './common';

const nullable = <T extends object>(schema: T) => ({ oneOf: [schema, { type: 'null' }] }) as const;

const dateBound = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
  'x-error-message': 'must be an ISO 8601 date (2026-11-21) or date-time (2026-11-21T10:15:00Z)',
} as const;

/** Filters shared by both call lists (CONTRACT.md section 4). */
export const callFilterProperties = {
  limit: limitSchema,
  cursor: cursorSchema,
  direction: { enum: ['inbound', 'outbound'] },
  status: { enum: CALL_STATUSES },
  date_from: { ...dateBound, description: 'Inclusive; a bare date means from 00:00 UTC' },
  date_to: { ...dateBound, description: 'Inclusive; a bare date means the whole UTC day' },
} as const;

export const callListQuerySchema = {
  type: 'object',
  properties: {
    ...callFilterProperties,
    receptionist_id: { type: 'string', pattern: '^rcp_[A-Za-z0-9]{1,64}$' },
  },
} as const;

export const receptionistCallsQuerySchema = {
  type: 'object',
  properties: callFilterProperties,
} as const;

const bookingHint = {
  type: 'object',
  required: ['confirmation', 'date', 'time', 'service_type'],
  properties: {
    confirmation: { type: 'string' },
    date: { type: 'string' },
    time: { type: 'string' },
    service_type: { type: 'string' },
  },
} as const;

const listItemProperties = {
  id: { type: 'string' },
  direction: { enum: ['inbound', 'outbound'] },
  status: { enum: CALL_STATUSES },
  from: { type: 'string' },
  to: { type: 'string' },
  customer_name: { type: ['string', 'null'] },
  duration_seconds: { type: ['integer', 'null'] },
  outcome: { type: ['string', 'null'] },
  started_at: timestamp,
  ended_at: nullableTimestamp,
  has_transcript: { type: 'boolean' },
  has_recording: { type: 'boolean' },
  receptionist_id: { type: 'string' },
  receptionist_name: { type: 'string' },
} as const;

export const callListItemSchema = {
  type: 'object',
  required: [...Object.keys(listItemProperties), 'booking'],
  properties: { ...listItemProperties, booking: nullable(bookingHint) },
} as const;

export const callListResponseSchema = {
  type: 'object',
  required: ['calls', 'next_cursor', 'scope'],
  properties: {
    calls: { type: 'array', items: callListItemSchema },
    next_cursor: { type: ['string', 'null'] },
    scope: { enum: ['all_receptionists', 'one_receptionist'] },
  },
} as const;

export const callDetailSchema = {
  type: 'object',
  properties: {
    ...listItemProperties,
    customer_phone: { type: ['string', 'null'] },
    answered_at: nullableTimestamp,
    end_reason: { type: ['string', 'null'] },
    transcript: nullable(transcriptSchema),
    recording: nullable(recordingSchema),
    booking: nullable(bookingSchema),
    cost: nullable(costSchema),
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;
