import type { FromSchema } from 'json-schema-to-ts';
import { LEAD_TAG_MAX, leadFieldSchemas } from '@switchboard/leads';
import { livemode, nullableTimestamp, phoneNumber, timestamp } from '../../shared/schemas';

/** The most recipients one campaign may have (docs/API.md, Campaigns). */
export const MAX_RECIPIENTS = 10_000;
export const MESSAGE_MAX = 1600;

const recipientsSchema = {
  title: 'CampaignRecipients',
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
  description:
    'Exactly one of `lead_ids`, `lead_filter` or `phones`, resolved when the campaign is ' +
    `accepted: at most ${MAX_RECIPIENTS.toLocaleString('en-US')} distinct phone numbers`,
  'x-error-message': 'recipients must have exactly one of lead_ids, lead_filter or phones',
  properties: {
    lead_ids: {
      type: 'array',
      maxItems: MAX_RECIPIENTS,
      items: {
        type: 'string',
        pattern: '^lead_[A-Za-z0-9]{1,64}$',
        'x-error-message': 'lead_ids must be lead ids (lead_...)',
      },
      description: 'Leads of this account; leads without a phone are skipped',
      'x-error-message': `lead_ids must be an array of at most ${MAX_RECIPIENTS} lead ids`,
    },
    lead_filter: {
      type: 'object',
      additionalProperties: false,
      description: 'Every lead of this account with a phone that matches (all leads when empty)',
      properties: {
        status: leadFieldSchemas.status,
        tag: {
          type: 'string',
          minLength: 1,
          maxLength: LEAD_TAG_MAX,
          'x-error-message': `tag must be a string of 1 to ${LEAD_TAG_MAX} characters`,
        },
      },
    },
    phones: {
      type: 'array',
      maxItems: MAX_RECIPIENTS,
      items: phoneNumber('phones', 'A recipient'),
      description: 'Numbers; one that is a lead’s phone gets that lead’s name for {{name}}',
      'x-error-message': `phones must be an array of at most ${MAX_RECIPIENTS} phone numbers`,
    },
  },
} as const;

/** The body of POST /campaigns (docs/API.md, Campaigns); unknown fields are a 400. */
export const createCampaignBodySchema = {
  title: 'CampaignCreateRequest',
  type: 'object',
  required: ['name', 'receptionist_id', 'message', 'recipients'],
  additionalProperties: false,
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      pattern: '\\S',
      description: 'For you: 1 to 200 characters, in campaign.completed too',
      'x-error-message': 'name must be 1 to 200 characters and not only spaces',
    },
    receptionist_id: {
      type: 'string',
      pattern: '^rcp_[A-Za-z0-9]{1,64}$',
      description: 'The ready receptionist to send from; its number is the sender',
      'x-error-message': 'receptionist_id must be a receptionist id (rcp_...)',
    },
    message: {
      type: 'string',
      minLength: 1,
      maxLength: MESSAGE_MAX,
      pattern: '\\S',
      description:
        '1 to 1600 characters, not only spaces; every `{{name}}` becomes the recipient’s ' +
        'name, or is removed when it has none. Rendered for the longest name, it must still ' +
        'fit 1600 characters.',
      'x-error-message': 'message must be 1 to 1600 characters and not only spaces',
    },
    recipients: recipientsSchema,
    send_rate_per_minute: {
      type: 'integer',
      minimum: 1,
      maximum: 600,
      default: 60,
      description: 'Messages a minute, 1 to 600 (default 60), kept by all workers together',
      'x-error-message': 'send_rate_per_minute must be an integer from 1 to 600',
    },
    allow_repeat: {
      type: 'boolean',
      default: false,
      description:
        'Text every recipient even when another campaign of the account texted the number ' +
        'within the repeat window (24 h by default); false (the default) skips them',
      'x-error-message': 'allow_repeat must be true or false',
    },
  },
} as const;

const campaignProperties = {
  id: { type: 'string', description: 'cmp_...' },
  name: { type: 'string' },
  receptionist_id: { type: 'string' },
  message: { type: 'string', description: 'As given, `{{name}}` included' },
  status: {
    enum: ['queued', 'running', 'completed', 'canceled'],
    description: 'queued, then running, then completed; or canceled',
  },
  recipients: {
    type: 'integer',
    minimum: 0,
    description: 'Distinct recipients (by phone), opted-out ones included',
  },
  sent: { type: 'integer', minimum: 0, description: 'Messages the carrier accepted (sms.sent)' },
  failed: {
    type: 'integer',
    minimum: 0,
    description: 'Messages that failed (carrier_rejected, provider_error, send_interrupted)',
  },
  opted_out: {
    type: 'integer',
    minimum: 0,
    description: 'Recipients skipped because they replied STOP',
  },
  skipped: {
    type: 'integer',
    minimum: 0,
    description:
      'Recipients not texted because a campaign of the account texted the number within ' +
      'the repeat window (never with allow_repeat)',
  },
  delivered: {
    type: 'integer',
    minimum: 0,
    description: 'Messages the carrier reported delivered so far (sms.delivered)',
  },
  undelivered: {
    type: 'integer',
    minimum: 0,
    description:
      'Messages the carrier reported undelivered so far (sms.failed with status undelivered)',
  },
  allow_repeat: { type: 'boolean' },
  send_rate_per_minute: { type: 'integer', minimum: 1, maximum: 600 },
  created_at: timestamp,
  started_at: nullableTimestamp,
  completed_at: nullableTimestamp,
  livemode,
} as const;

/** The campaign shape (docs/API.md, Campaigns). */
export const campaignSchema = {
  title: 'Campaign',
  type: 'object',
  required: Object.keys(campaignProperties),
  properties: campaignProperties,
} as const;

export type CreateCampaignBody = FromSchema<typeof createCampaignBodySchema>;

export const createCampaignExample: CreateCampaignBody = {
  name: 'Spring boiler check',
  receptionist_id: 'rcp_7Hq2Lm9Xc4Tz',
  message: 'Hi {{name}}, spring boiler checks are open: reply YES to book. Reply STOP to opt out.',
  recipients: { lead_filter: { status: 'won', tag: 'boiler' } },
  send_rate_per_minute: 60,
  allow_repeat: false,
};

export const queuedCampaignExample: FromSchema<typeof campaignSchema> = {
  id: 'cmp_9Pl1kM3nB5vC',
  name: 'Spring boiler check',
  receptionist_id: 'rcp_7Hq2Lm9Xc4Tz',
  message: 'Hi {{name}}, spring boiler checks are open: reply YES to book. Reply STOP to opt out.',
  status: 'queued',
  recipients: 240,
  sent: 0,
  failed: 0,
  opted_out: 0,
  skipped: 0,
  delivered: 0,
  undelivered: 0,
  allow_repeat: false,
  send_rate_per_minute: 60,
  created_at: '2026-11-21T10:15:00.000Z',
  started_at: null,
  completed_at: null,
  livemode: true,
};

export const runningCampaignExample: FromSchema<typeof campaignSchema> = {
  ...queuedCampaignExample,
  status: 'running',
  sent: 131,
  failed: 2,
  opted_out: 3,
  delivered: 118,
  undelivered: 4,
  started_at: '2026-11-21T10:15:00.084Z',
};

export const canceledCampaignExample: FromSchema<typeof campaignSchema> = {
  ...runningCampaignExample,
  status: 'canceled',
};
