import type { FromSchema } from 'json-schema-to-ts';
import {
  historyFilterProperties,
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
  },
} as const;

const smsProperties = {
  id: { type: 'string', description: 'sms_...' },
  direction: { enum: ['inbound', 'outbound'] },
  status: {
    enum: ['queued', 'sent', 'failed', 'received'],
    description: 'outbound: queued, then sent or failed; inbound: received',
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
      'got it is unknown, and it is never sent again)',
  },
  metadata: { type: 'object', additionalProperties: { type: 'string' } },
  created_at: timestamp,
  sent_at: nullableTimestamp,
  received_at: nullableTimestamp,
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
  metadata: { crm_id: 'c-42' },
  created_at: '2026-11-21T10:15:00.000Z',
  sent_at: null,
  received_at: null,
};

export const sentSmsExample: FromSchema<typeof smsSchema> = {
  ...queuedSmsExample,
  status: 'sent',
  sent_at: '2026-11-21T10:15:00.412Z',
};
