import type { FromSchema } from 'json-schema-to-ts';
import { timestamp } from '../../shared/schemas';

/** Query of GET /usage: an optional month; the current one (UTC) by default. */
export const usageQuerySchema = {
  type: 'object',
  properties: {
    period: {
      type: 'string',
      pattern: '^(19[7-9][0-9]|[2-9][0-9]{3})-(0[1-9]|1[0-2])$',
      description: 'The billing month to read, YYYY-MM (UTC); the current month by default',
      'x-error-message': 'period must be a month as YYYY-MM, e.g. 2026-11',
    },
  },
} as const;

const count = { type: 'integer', minimum: 0 } as const;

/** GET /usage (docs/API.md, Usage). */
export const usageSchema = {
  title: 'Usage',
  type: 'object',
  required: [
    'billing_period_start',
    'billing_period_end',
    'minutes_used',
    'minutes_included',
    'percent_used',
    'calls_completed',
    'sms_sent',
    'sms_received',
    'by_receptionist',
  ],
  properties: {
    billing_period_start: timestamp,
    billing_period_end: { ...timestamp, description: 'The first instant of the next month' },
    minutes_used: count,
    minutes_included: count,
    percent_used: {
      type: 'number',
      minimum: 0,
      description: 'minutes_used / minutes_included in percent, one decimal (0 when none included)',
    },
    calls_completed: count,
    sms_sent: count,
    sms_received: count,
    by_receptionist: {
      type: 'array',
      description: 'Receptionists with completed calls in the period, most minutes first',
      items: {
        type: 'object',
        required: ['receptionist_id', 'name', 'minutes_used', 'calls_completed'],
        properties: {
          receptionist_id: { type: 'string' },
          name: { type: 'string' },
          minutes_used: count,
          calls_completed: count,
        },
      },
    },
  },
} as const;

export const usageExample: FromSchema<typeof usageSchema> = {
  billing_period_start: '2026-11-01T00:00:00.000Z',
  billing_period_end: '2026-12-01T00:00:00.000Z',
  minutes_used: 412,
  minutes_included: 1000,
  percent_used: 41.2,
  calls_completed: 187,
  sms_sent: 96,
  sms_received: 41,
  by_receptionist: [
    {
      receptionist_id: 'rcp_7Hq2Lm9Xc4Tz',
      name: 'Front Desk',
      minutes_used: 300,
      calls_completed: 140,
    },
    {
      receptionist_id: 'rcp_2Jd8Kq1Pw6Yx',
      name: 'After Hours',
      minutes_used: 112,
      calls_completed: 47,
    },
  ],
};
