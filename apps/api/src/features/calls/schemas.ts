import type { FromSchema } from 'json-schema-to-ts';
import { bookingSchema, CALL_OUTCOMES, CALL_STATUSES, END_REASONS } from '@switchboard/db';
import { costSchema, recordingSchema, transcriptSchema } from '@switchboard/telephony';
import {
  historyFilterProperties,
  livemode,
  nullableTimestamp,
  timestamp,
} from '../../shared/schemas';

const nullable = <T extends object>(schema: T) => ({ oneOf: [schema, { type: 'null' }] }) as const;

/** Filters shared by both call lists (docs/API.md, Pagination). */
export const callFilterProperties = {
  ...historyFilterProperties,
  status: { enum: CALL_STATUSES },
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

/**
 * The booking as both lists show it: the one booking schema (packages/db) without its
 * address, which only a call's detail carries (shared/call-render.ts).
 */
const { address: _address, ...bookingListProperties } = bookingSchema.properties;
const bookingListSchema = {
  ...bookingSchema,
  required: bookingSchema.required.filter(
    (key): key is Exclude<typeof key, 'address'> => key !== 'address',
  ),
  properties: bookingListProperties,
};

const listItemProperties = {
  id: { type: 'string' },
  direction: { enum: ['inbound', 'outbound'] },
  status: { enum: CALL_STATUSES },
  from: { type: 'string' },
  to: { type: 'string' },
  customer_name: { type: ['string', 'null'] },
  duration_seconds: { type: ['integer', 'null'] },
  outcome: { enum: [...CALL_OUTCOMES, null], description: 'null until the call ends' },
  started_at: timestamp,
  ended_at: nullableTimestamp,
  has_transcript: { type: 'boolean' },
  has_recording: { type: 'boolean' },
  receptionist_id: { type: 'string' },
  receptionist_name: { type: 'string' },
  livemode,
} as const;

export const callListItemSchema = {
  title: 'Call',
  type: 'object',
  required: [...Object.keys(listItemProperties), 'booking'],
  properties: { ...listItemProperties, booking: nullable(bookingListSchema) },
} as const;

export const callListResponseSchema = {
  title: 'CallList',
  type: 'object',
  required: ['calls', 'next_cursor', 'scope'],
  properties: {
    calls: { type: 'array', items: callListItemSchema },
    next_cursor: { type: ['string', 'null'] },
    scope: { enum: ['all_receptionists', 'one_receptionist'] },
  },
} as const;

export const callDetailSchema = {
  title: 'CallDetail',
  type: 'object',
  properties: {
    ...listItemProperties,
    customer_phone: { type: ['string', 'null'] },
    answered_at: nullableTimestamp,
    end_reason: { enum: [...END_REASONS, null], description: 'null until the call ends' },
    transcript: nullable(transcriptSchema),
    recording: nullable(recordingSchema),
    booking: nullable(bookingSchema),
    cost: nullable(costSchema),
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

export const callListItemExample: FromSchema<typeof callListItemSchema> = {
  id: 'call_8Qz3kV1mN7pX2bR4',
  direction: 'inbound',
  status: 'completed',
  from: '+14155550123',
  to: '+14155550199',
  customer_name: 'Dana Whitfield',
  duration_seconds: 95,
  outcome: 'booked',
  started_at: '2026-11-21T10:15:00.000Z',
  ended_at: '2026-11-21T10:16:35.000Z',
  has_transcript: true,
  has_recording: true,
  receptionist_id: 'rcp_7Hq2Lm9Xc4Tz',
  receptionist_name: 'Front Desk',
  livemode: true,
  booking: {
    confirmation: 'BK-1042',
    date: '2026-11-24',
    time: '09:30',
    service_type: 'Boiler service',
  },
};

export const callListExample: FromSchema<typeof callListResponseSchema> = {
  calls: [callListItemExample],
  next_cursor: 'WzE3OTUyNTYxMDAwMDAsImNhbGxfOFF6M2tWMW1ON3BYMmJSNCJd.x0pZrTq1Yw8M3nB6vC2a7A',
  scope: 'all_receptionists',
};

export const callDetailExample: FromSchema<typeof callDetailSchema> = {
  ...callListItemExample,
  customer_phone: '+14155550123',
  answered_at: '2026-11-21T10:15:01.000Z',
  end_reason: 'caller_hangup',
  transcript: {
    summary: 'Dana booked a boiler service for Tuesday at 09:30.',
    turns: [
      {
        role: 'assistant',
        text: 'Thanks for calling Acme Plumbing, how can I help?',
        offset_seconds: 0,
      },
      { role: 'customer', text: 'My boiler needs a service.', offset_seconds: 2.5 },
    ],
  },
  recording: {
    url: 'https://recordings.example.com/rec_1.mp3',
    duration_seconds: 95,
    format: 'mp3',
  },
  booking: {
    confirmation: 'BK-1042',
    date: '2026-11-24',
    time: '09:30',
    service_type: 'Boiler service',
    address: '12 Elm Street, Springfield',
  },
  cost: { currency: 'USD', total: 0.42, breakdown: { telephony: 0.12, ai: 0.3, sms: 0 } },
  metadata: { crm_id: 'c-42' },
};
