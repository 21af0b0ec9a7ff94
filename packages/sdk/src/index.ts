/**
 * `@switchboard/sdk`: the typed client of the Switchboard API. Types come from the API's
 * OpenAPI document (`src/generated/openapi.ts`); the hand-written part adds auto-pagination,
 * idempotency keys, retries and webhook verification. No dependencies beyond Node's `fetch`
 * and `node:crypto`.
 */
// First: an unsupported Node fails here, with a message that says so.
import './node-check';

export { Switchboard, apiBaseUrl, type SwitchboardOptions } from './client';
export {
  SwitchboardError,
  SwitchboardConnectionError,
  WebhookVerificationError,
  type SwitchboardErrorType,
  type ErrorCode,
  type SdkErrorCode,
  type WebhookVerificationReason,
} from './errors';
export { verifyWebhook, type VerifyWebhookOptions, type WebhookHeaders } from './verify-webhook';
export { PageIterator, type Page } from './pagination';
export { parseEventStream, type EventStreamOptions, type SseMessage } from './event-stream';
export type { EventStreamParams } from './resources/events';
export type { RetryOptions } from './retry';
export type { StartOutboundOptions } from './resources/calls';
export type { EditOptions, IdempotentRequestOptions } from './resources/resource';
export { etagOf } from './etags';
export { MAX_LEAD_IMPORT_BYTES, type CsvInput } from './resources/leads';
export type * from './types';
