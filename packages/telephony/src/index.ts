/**
 * Telephony ingestion: message schemas, the one code path that applies them to calls and
 * inbound SMS, and the SMS text rules (segments, keywords, safe text).
 */
export * from './schemas';
export * from './messages';
export * from './errors';
export { applyTelephonyMessage, type ApplyResult } from './apply';
export * from './scenarios';
export * from './sms-text';
export * from './campaign-text';
