import { E164_PATTERN } from '@switchboard/phone';
import { metadataKeySchema } from '@switchboard/leads';
import { ERROR_CODES } from '../error-codes';

/** Schemas shared by many routes; `as const` so types can be derived from them. */

export const errorBodySchema = {
  title: 'Error',
  description: 'The body of every error response',
  type: 'object',
  required: ['error', 'request_id'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message', 'doc_url'],
      properties: {
        type: {
          enum: [
            'invalid_request_error',
            'authentication_error',
            'permission_error',
            'rate_limit_error',
            'api_error',
            'service_unavailable',
          ],
        },
        code: {
          type: 'string',
          enum: ERROR_CODES,
          description:
            'Stable, for programs: branch on this (docs/API.md, Errors). A later API version may add codes: treat an unknown one by its `type` and status',
        },
        message: { type: 'string', description: 'For people; may change' },
        param: { type: 'string', description: 'The offending field, when there is one' },
        doc_url: {
          type: 'string',
          description:
            "Where the code is documented: the anchor of `code` in the API reference, docs/API.md of the repository (`docs/API.md#error-<code>`, a path from the repository's root)",
          example: 'docs/API.md#error-invalid_parameter',
        },
      },
    },
    request_id: { type: 'string', description: 'Also in the X-Request-Id header' },
  },
} as const;

/** Event names: lowercase dotted words (`call.completed`); unknown names are accepted. */
export const EVENT_NAME_PATTERN = '^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)+$';

export const limitSchema = {
  type: 'integer',
  minimum: 1,
  maximum: 100,
  default: 20,
  description: 'Page size, 1 to 100 (default 20)',
  'x-error-message': 'limit must be an integer between 1 and 100',
} as const;

export const cursorSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 512,
  description: 'Opaque cursor from the previous page; omit for the first page',
} as const;

/** Query of every plain list: limit and cursor. Unknown query parameters are ignored. */
export const pageQuerySchema = {
  type: 'object',
  properties: { limit: limitSchema, cursor: cursorSchema },
} as const;

/** A date bound of a history filter: a bare date or a date-time (pagination/date-range.ts). */
export const dateBound = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
  'x-error-message': 'must be an ISO 8601 date (2026-11-21) or date-time (2026-11-21T10:15:00Z)',
} as const;

/**
 * Query of the history lists (calls, SMS): page, direction and a date range (docs/API.md, Pagination); parsed into bounds by `dateRange` (pagination/date-range.ts).
 */
export const historyFilterProperties = {
  limit: limitSchema,
  cursor: cursorSchema,
  direction: { enum: ['inbound', 'outbound'] },
  date_from: { ...dateBound, description: 'Inclusive; a bare date means from 00:00 UTC' },
  date_to: { ...dateBound, description: 'Inclusive; a bare date means the whole UTC day' },
} as const;

/** `metadata` of a created resource (calls, SMS): returned as given in its detail. */
export const metadataSchema = {
  type: 'object',
  maxProperties: 20,
  propertyNames: metadataKeySchema,
  additionalProperties: {
    type: 'string',
    maxLength: 500,
    'x-error-message': 'metadata values must be strings of at most 500 characters',
  },
  description:
    'Up to 20 string values of up to 500 characters, under keys of up to 100 characters, returned in the detail',
  'x-error-message': 'metadata must be an object of at most 20 string values',
} as const;

export const idParamSchema = (prefix: string, name = 'id') =>
  ({
    type: 'object',
    required: [name],
    properties: { [name]: { type: 'string', pattern: `^${prefix}_[A-Za-z0-9]{1,64}$` } },
  }) as const;

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

/** The 404 of every route on one subscription (`/webhooks/{id}`, and what lies below it). */
export const subscriptionNotFoundDoc = {
  404: 'resource_not_found: no such webhook subscription in this tenant',
} as const;

export const paginated = (item: object) =>
  ({
    type: 'object',
    required: ['data', 'has_more', 'cursor'],
    properties: {
      data: { type: 'array', items: item },
      has_more: { type: 'boolean' },
      cursor: { type: ['string', 'null'] },
    },
  }) as const;

/**
 * A phone number field (docs/API.md, Basics): E.164 syntax and a length possible for its
 * country code. The `e164` format is registered by the validation layer
 * (`isPossibleE164` of @switchboard/phone); every feature's schemas use this.
 */
export const phoneNumber = <P extends string>(param: P, description: string) =>
  ({
    type: 'string',
    format: 'e164',
    pattern: E164_PATTERN,
    description: `${description}: E.164, e.g. +14155550123`,
    'x-error-message': `${param} must be a phone number in E.164 format, e.g. +14155550123`,
  }) as const;

export const timestamp = { type: 'string', format: 'date-time' } as const;
export const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;

/** Whether a resource (or event) is live: false when made with a test-mode key (docs/API.md, Test mode). */
export const livemode = {
  type: 'boolean',
  description: 'false when made with a test-mode key (sk_test_): test data, seen by test keys only',
} as const;

/** A page example around `item`, as every `{data, has_more, cursor}` list answers. */
export const pageExample = <T>(item: T) => ({
  data: [item],
  has_more: true,
  cursor: 'WzE3OTUyNTYxMDAwMDAsInJjcF83SHEyTG05WGM0VHoiXQ.Rk9PQkFS',
});

/** The documented shape of an `Idempotency-Key` header (checked by parseIdempotencyKey). */
export const idempotencyKeySchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7e]+$',
  description: '1 to 255 printable ASCII characters',
} as const;
