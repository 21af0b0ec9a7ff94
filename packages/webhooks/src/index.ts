/**
 * `@switchboard/webhooks`: signing of webhook deliveries (Switchboard's `x-service-*` scheme
 * and Standard Webhooks), the address and URL policy that keeps deliveries off private
 * networks, and the SSRF-safe HTTPS sender. Verification is the SDK's one `verifyWebhook`
 * (packages/sdk/src/verify-webhook.ts), what subscribers run.
 */
export { generateSigningSecret, decodeSigningSecret, SIGNING_SECRET_PREFIX } from './secrets';
export {
  SERVICE_TIMESTAMP_HEADER,
  SERVICE_SIGNATURE_HEADER,
  SERVICE_EVENT_ID_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  STANDARD_SIGNATURE_HEADER,
} from './headers';
export {
  signPayload,
  computeServiceSignature,
  computeStandardSignature,
  type SignPayloadInput,
  type SignedHeaders,
} from './sign';
export { isBlockedAddress } from './address-policy';
export {
  parseWebhookUrl,
  checkUrlTarget,
  systemLookup,
  WebhookTargetError,
  MAX_WEBHOOK_URL_LENGTH,
  type ParsedWebhookUrl,
  type UrlRejectionReason,
  type LookupFn,
  type ResolvedAddress,
  type CheckTargetOptions,
  type CheckedTarget,
  type TargetErrorCode,
} from './url-policy';
export {
  createWebhookSender,
  type WebhookSender,
  type WebhookSenderOptions,
  type SendRequest,
} from './sender';
export { classifySendError, type SendResult, type SendErrorCode } from './send-errors';
