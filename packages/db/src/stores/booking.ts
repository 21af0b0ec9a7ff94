import type { FromSchema } from 'json-schema-to-ts';

/**
 * The booking a call made (docs/API.md, Calls): the one definition of its shape. Telephony
 * ingestion validates it, `calls.booking` stores it, the call detail and `call.completed`
 * carry it unchanged; every other spelling is derived from this one.
 */
export const bookingSchema = {
  type: 'object',
  required: ['confirmation', 'date', 'time', 'service_type', 'address'],
  additionalProperties: false,
  properties: {
    confirmation: { type: 'string', maxLength: 100 },
    date: { type: 'string', format: 'date' },
    time: { type: 'string', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' },
    service_type: { type: 'string', maxLength: 200 },
    address: { type: 'string', maxLength: 500 },
  },
} as const;

export type Booking = FromSchema<typeof bookingSchema>;
