import type { ApiErrorBody } from './types';

/** The `type` of an API error, plus `connection_error` when no answer came back. */
export type SwitchboardErrorType = ApiErrorBody['error']['type'] | 'connection_error';

/** The SDK's own codes: no usable answer came back (no connection, a timeout, not the API's body). */
export type SdkErrorCode = 'network_error' | 'timeout' | 'invalid_response' | 'http_error';

/**
 * Every `code` of a {@link SwitchboardError}: the API's (the union is generated from the
 * OpenAPI document's enum, see docs/API.md, Errors) and the SDK's own. A newer API may add a
 * code this version does not list: branch on the ones you handle and treat the rest by
 * `type` and `status`.
 */
export type ErrorCode = ApiErrorBody['error']['code'] | SdkErrorCode;

/**
 * Every failed API call throws this (after the client's retries). `status`, `type`, `code`,
 * `param`, `doc_url` and `request_id` are the API's own: branch on `code`, quote `request_id`.
 */
export class SwitchboardError extends Error {
  override readonly name: string = 'SwitchboardError';
  /** HTTP status; null when no response came back (see {@link SwitchboardConnectionError}). */
  readonly status: number | null;
  readonly type: SwitchboardErrorType;
  readonly code: ErrorCode;
  /** The offending field, when the API named one. */
  readonly param: string | null;
  /**
   * Where the API documents `code`: its anchor in the API reference, as a path from the root
   * of the Switchboard repository (`docs/API.md#error-<code>`); null for the SDK's own codes.
   */
  readonly doc_url: string | null;
  /** The API's request id (also in `X-Request-Id`); null when no response came back. */
  readonly request_id: string | null;
  /** The response headers (`Retry-After`, ...); null when no response came back. */
  readonly headers: Headers | null;

  constructor(init: {
    status: number | null;
    type: SwitchboardErrorType;
    code: ErrorCode;
    message: string;
    param?: string | null;
    doc_url?: string | null;
    request_id?: string | null;
    headers?: Headers | null;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.doc_url = init.doc_url ?? null;
    this.request_id = init.request_id ?? null;
    this.headers = init.headers ?? null;
  }
}

/** No HTTP answer: the connection failed or the request timed out (`code` says which). */
export class SwitchboardConnectionError extends SwitchboardError {
  override readonly name = 'SwitchboardConnectionError';
  constructor(code: 'network_error' | 'timeout', message: string, cause?: unknown) {
    super({ status: null, type: 'connection_error', code, message, cause });
  }
}

/** Why {@link verifyWebhook} refused a delivery. */
export type WebhookVerificationReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_secret'
  | 'invalid_payload';

/**
 * Thrown by {@link verifyWebhook}: the delivery is not provably from Switchboard (tampered,
 * wrong secret: `invalid_signature`), too old or from the future (`timestamp_out_of_tolerance`),
 * or incomplete. Answer such a request with a 4xx and do not act on it.
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}
