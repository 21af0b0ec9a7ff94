/** Idempotency-Key support: header parsing, body fingerprints, Redis entries, the protocol. */
export { IDEMPOTENCY_HEADER, idempotencyRedisKey, parseIdempotencyKey } from './key';
export { fingerprintBody } from './fingerprint';
export {
  DEFAULT_IDEMPOTENCY_OPTIONS,
  Idempotency,
  idempotencyKeyReused,
  type IdempotencyOptions,
  type IdempotentResponse,
} from './service';
