/** Why a delivery attempt failed; null in {@link SendResult} when it succeeded. */
export type SendErrorCode =
  | 'timeout'
  | 'connection_refused'
  | 'tls_error'
  | 'blocked_address'
  | 'dns_error'
  | 'invalid_url'
  | 'redirect'
  | 'http_error'
  | 'network_error';

/** Outcome of one delivery attempt. Field names follow the API's delivery-attempt shape. */
export interface SendResult {
  /** True only for a 2xx response. */
  delivered: boolean;
  /** Null when no HTTP response came back. */
  status_code: number | null;
  error: SendErrorCode | null;
  /** Wall time of the attempt, DNS included, whole milliseconds. */
  duration_ms: number;
  /** Start of the response body as UTF-8; null when no response came back. */
  response_excerpt: string | null;
  /** The headers sent (signatures included; a secret is never a header). */
  request_headers?: Record<string, string>;
  /** The response's headers (lowercase names), capped; null when no response came back. */
  response_headers?: Record<string, string> | null;
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'HOSTNAME_MISMATCH',
  'EPROTO',
]);
const TLS_PREFIXES = ['CERT_', 'ERR_TLS_', 'ERR_SSL_'];
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ECONNABORTED', 'ERR_CANCELED', 'ABORT_ERR']);

/** Error codes along an error and its `cause` chain (axios wraps the Node error). */
function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    const name = (current as { name?: unknown }).name;
    if (name === 'TimeoutError' || name === 'AbortError') codes.push('ABORT_ERR');
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

/**
 * Maps a failed request (no HTTP response) to a {@link SendErrorCode}. `deadlinePassed`
 * wins over everything: once the attempt's deadline fired, whatever error surfaced is a
 * consequence of the abort.
 */
export function classifySendError(error: unknown, deadlinePassed: boolean): SendErrorCode {
  if (deadlinePassed) return 'timeout';
  const codes = errorCodes(error);
  if (codes.includes('ECONNREFUSED')) return 'connection_refused';
  if (codes.some((c) => TLS_CODES.has(c) || TLS_PREFIXES.some((p) => c.startsWith(p)))) {
    return 'tls_error';
  }
  if (codes.some((c) => DNS_CODES.has(c))) return 'dns_error';
  if (codes.some((c) => TIMEOUT_CODES.has(c))) return 'timeout';
  return 'network_error';
}
