/**
 * Every `code` an error body can carry (docs/API.md, Errors). The OpenAPI document lists them
 * as the enum of `Error.error.code`, so the SDK's `ErrorCode` is this union, generated from
 * the document. test/api/error-codes-doc.test.ts fails when the source raises a code that is
 * not here or the table of docs/API.md lacks one of these.
 */
export const ERROR_CODES = [
  'delivery_in_progress',
  'idempotency_key_reused',
  'idempotency_request_in_progress',
  'insufficient_scope',
  'internal_error',
  'invalid_api_key',
  'invalid_authorization_header',
  'invalid_body',
  'invalid_carrier_signature',
  'invalid_cursor',
  'invalid_ingest_token',
  'invalid_json',
  'invalid_parameter',
  'invalid_path',
  'invalid_portal_code',
  'invalid_portal_token',
  'invalid_state',
  'lead_exists',
  'limit_exceeded',
  'live_mode_only',
  'malformed_request',
  'method_not_allowed',
  'missing_api_key',
  'no_recipients',
  'not_cancellable',
  'payload_too_large',
  'precondition_failed',
  'rate_limited',
  'receptionist_not_ready',
  'recovery_in_progress',
  'recipient_opted_out',
  'request_aborted',
  'request_headers_too_large',
  'request_timeout',
  'resource_not_found',
  'route_not_found',
  'service_unavailable',
  'subscription_disabled',
  'too_many_recipients',
  'unknown_receptionist',
  'unknown_tool',
  'unsupported_media_type',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * Where every error code is documented: docs/API.md, a path from the repository's root, the
 * same in every deployment and every version (docs/decisions/0108-error-doc-urls.md).
 */
export const ERROR_DOCS = 'docs/API.md';

/**
 * The `doc_url` of an error body: the anchor of its code in docs/API.md (`<a id="error-…">`),
 * e.g. `docs/API.md#error-invalid_parameter`. test/api/error-codes-doc.test.ts checks that
 * docs/API.md has the anchor of every code.
 */
export const docUrlOf = (code: ErrorCode): string => `${ERROR_DOCS}#error-${code}`;
