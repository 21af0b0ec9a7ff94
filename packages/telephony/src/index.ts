/**
 * Telephony ingestion: message schemas and the one code path that applies them to calls and
 * inbound SMS (whose text rules and outcomes are packages/sms's).
 */
export * from './ingestion/schemas';
export * from './ingestion/messages';
export * from './ingestion/errors';
export * from './ingestion/carrier-signature';
export { applyTelephonyMessage, type ApplyResult } from './ingestion/apply';
