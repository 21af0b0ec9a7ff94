import type { ErrorCode } from './error-codes';

/** Error types (docs/API.md, Errors), keyed by the HTTP status family they go with. */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'api_error'
  | 'service_unavailable';

/**
 * The one error class routes throw. The error middleware renders it as the contract's error
 * body; anything else thrown becomes a logged 500 with no detail.
 */
/** What an error answer is made of (docs/API.md, Errors): an ApiError, or the same as data. */
export interface ErrorAnswer {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: ErrorCode;
  readonly message: string;
  readonly param: string | null;
  readonly headers: Record<string, string>;
}

export class ApiError extends Error implements ErrorAnswer {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const invalidParameter = (param: string, message: string): ApiError =>
  new ApiError(400, 'invalid_request_error', 'invalid_parameter', message, param);

export const invalidCursor = (): ApiError =>
  new ApiError(
    400,
    'invalid_request_error',
    'invalid_cursor',
    'cursor is not valid for this list; take it unchanged from the previous response',
    'cursor',
  );

export const notFound = (what: string, param: string | null = null): ApiError =>
  new ApiError(404, 'invalid_request_error', 'resource_not_found', `No such ${what}`, param);

export const conflict = (code: ErrorCode, message: string, headers: Record<string, string> = {}) =>
  new ApiError(409, 'invalid_request_error', code, message, null, headers);

export const unprocessable = (code: ErrorCode, message: string, param: string | null = null) =>
  new ApiError(422, 'invalid_request_error', code, message, param);

export const unauthenticated = (code: ErrorCode, message: string): ApiError =>
  new ApiError(401, 'authentication_error', code, message, null, {
    'WWW-Authenticate': 'Bearer',
  });

export const insufficientScope = (scope: string): ApiError =>
  new ApiError(
    403,
    'permission_error',
    'insufficient_scope',
    `This API key lacks the ${scope} scope required by this operation`,
  );

/** A test-mode key on an operation test mode does not cover (docs/API.md, Test mode). */
export const liveModeOnly = (): ApiError =>
  new ApiError(
    403,
    'permission_error',
    'live_mode_only',
    'This operation is not available in test mode: use a live key (sk_live_)',
  );

export const serviceUnavailable = (message = 'A backing service is unavailable; retry shortly') =>
  new ApiError(503, 'service_unavailable', 'service_unavailable', message, null, {
    'Retry-After': '1',
  });
