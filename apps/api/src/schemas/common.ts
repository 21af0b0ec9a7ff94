/** Schemas shared by many routes; `as const` so types can be derived from them. */

export const errorBodySchema = {
  type: 'object',
  required: ['error', 'request_id'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message'],
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
        code: { type: 'string' },
        message: { type: 'string' },
        param: { type: 'string' },
      },
    },
    request_id: { type: 'string' },
  },
} as const;

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

export const idParamSchema = (prefix: string, name = 'id') =>
  ({
    type: 'object',
    required: [name],
    properties: { [name]: { type: 'string', pattern: `^${prefix}_[A-Za-z0-9]{1,64}$` } },
  }) as const;

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

export const timestamp = { type: 'string', format: 'date-time' } as const;
export const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
