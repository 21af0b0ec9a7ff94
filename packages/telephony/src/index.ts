/** Telephony ingestion: message schemas and the one code path that applies them to calls. */
export * from './schemas';
export * from './messages';
export * from './errors';
export { applyTelephonyMessage, type ApplyResult } from './apply';
export * from './scenarios';
