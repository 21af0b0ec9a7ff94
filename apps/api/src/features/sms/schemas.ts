import type { FromSchema } from 'json-schema-to-ts';
import {
  historyFilterProperties,
  livemode,
  metadataSchema,
  nullableTimestamp,
  phoneNumber,
  timestamp,
} from '../../shared/schemas';

/** The body of POST /sms/send (docs/API.md, SMS); unknown fields are a 400. */
export const sendSmsBodySchema = {
  title: 'SmsSendRequest',
  type: 'object',
  required: ['receptionist_id', 'to', 'message'],
  additionalProperties: false,
  properties: {
    receptionist_id: {
      type: 'string',
      pattern: '^rcp_[A-Za-z0-9]{1,64}$',
      description: 'The ready receptionist to send from; its number is the sender',
      'x-error-message': 'receptionist_id must be a receptionist id (rcp_...)',
    },
    to: phoneNumber('to', 'The recipient'),
    message: {
      type: 'string',
      minLength: 1,
      maxLength: 1600,
      // Not only whitespace: a blank text is never what a sender meant.
      pattern: '\\S',
      description:
        '1 to 1600 characters (Unicode code points), not only spaces; split into segments ' +
        'of 160 GSM-7 characters (153 when split) or 70 UCS-2 code units (67)',
      'x-error-message': 'message must be 1 to 1600 characters and not only spaces',
    },
    metadata: metadataSchema,
    send_at: {
      type: 'string',
      format: 'date-time',
      description:
        'Schedule the message: an ISO 8601 date-time 60 seconds to 30 days ahead. It is ' +
        '`scheduled` until then, and `DELETE /sms/{id}` cancels it',
      'x-error-message': 'send_at must be an ISO 8601 date-time 60 seconds to 30 days ahead',
    },
  },
} as const;

const smsProperties = {
  id: { type: 'string', description: 'sms_...' },
  direction: { enum: ['inbound', 'outbound'] },
  status: {
    enum: [
      'scheduled',
      'queued',
      'sending',
      'sent',
      'delivered',
      'undelivered',
      'failed',
      'cancelled',
      'received',
    ],
    description:
      'outbound: queued → sending → sent → delivered | undelivered, or failed; scheduled → ' +
      'queued | cancelled; inbound: received. Statuses only move forward',
  },
  receptionist_id: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  message: { type: 'string' },
  segments: { type: 'integer', minimum: 1 },
  campaign_id: { type: ['string', 'null'] },
  error_code: {
    type: ['string', 'null'],
    description:
      'Why a message failed: carrier_rejected, provider_error, recipient_opted_out (opted out ' +
      'after it was accepted), send_interrupted (the sending worker died; whether the carrier ' +
      'got it is unknown, and it is never sent again); for undelivered, the carrier code ' +
      '(unreachable_handset, ...); recipient_opted_out on a cancelled scheduled message',
  },
  error_message: { type: ['string', 'null'], description: 'A sentence explaining error_code' },
  metadata: { type: 'object', additionalProperties: { type: 'string' } },
  created_at: timestamp,
  send_at: { ...nullableTimestamp, description: 'When a scheduled message goes; null otherwise' },
  sent_at: nullableTimestamp,
  delivered_at: nullableTimestamp,
  received_at: nullableTimestamp,
  livemode,
} as const;

/** The message shape (docs/API.md, SMS), in the 202, the detail and the history. */
export const smsSchema = {
  title: 'Sms',
  type: 'object',
  required: Object.keys(smsProperties),
  properties: smsProperties,
} as const;

/** GET /receptionists/{id}/sms: page, direction, date range (as for calls). */
export const smsHistoryQuerySchema = {
  type: 'object',
  properties: historyFilterProperties,
} as const;

export const sendSmsBodyExample: FromSchema<typeof sendSmsBodySchema> = {
  receptionist_id: 'rcp_7Hq2Lm9Xc4Tz',
  to: '+14155550123',
  message: 'Hi Dana, your boiler service is booked for Tuesday 10:00. Reply STOP to opt out.',
  metadata: { crm_id: 'c-42' },
};

export const queuedSmsExample: FromSchema<typeof smsSchema> = {
  id: 'sms_3Kf9Tq7Wz2Lp',
  direction: 'outbound',
  status: 'queued',
  receptionist_id: 'rcp_7Hq2Lm9Xc4Tz',
  from: '+14155550199',
  to: '+14155550123',
  message: 'Hi Dana, your boiler service is booked for Tuesday 10:00. Reply STOP to opt out.',
  segments: 1,
  campaign_id: null,
  error_code: null,
  error_message: null,
  metadata: { crm_id: 'c-42' },
  created_at: '2026-11-21T10:15:00.000Z',
  send_at: null,
  sent_at: null,
  delivered_at: null,
  received_at: null,
  livemode: true,
};

export const sentSmsExample: FromSchema<typeof smsSchema> = {
  ...queuedSmsExample,
  status: 'delivered',
  sent_at: '2026-11-21T10:15:00.412Z',
  delivered_at: '2026-11-21T10:15:01.020Z',
};
