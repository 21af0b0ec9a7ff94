/**
 * Telephony ingestion: message schemas, the one code path that applies them to calls and
 * inbound SMS, and the SMS text rules (segments, keywords, safe text).
 */
export * from './ingestion/schemas';
export * from './ingestion/messages';
export * from './ingestion/errors';
export { applyTelephonyMessage, type ApplyResult } from './ingestion/apply';
export * from './text/sms-text';
export * from './text/campaign-text';
export * from './text/sms-replies';
export * from './sms/outcomes';
