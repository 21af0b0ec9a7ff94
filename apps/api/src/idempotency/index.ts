/** Idempotency-Key support: header parsing, fingerprints, Redis entries, the protocol. */
export { IDEMPOTENCY_HEADER, idempotencyRedisKey, parseIdempotencyKey } from './key';
export { fingerprintRequest } from './fingerprint';
export {
  DEFAULT_IDEMPOTENCY_OPTIONS,
  Idempotency,
  idempotencyKeyReused,
  type IdempotencyOptions,
  type IdempotentResponse,
} from './service';
export {
  idempotencyKeyHeaderDoc,
  idempotentReplayHeaderDoc,
  replayOrReject,
  respondIdempotently,
  runIdempotently,
  sendIdempotent,
  type CreateOperation,
  type IdempotencyScope,
} from './respond';
