/** How the client retries: bounded tries, exponential backoff with jitter, Retry-After. */
export interface RetryOptions {
  /** Retries after the first try (so `maxRetries + 1` tries at most). Default 3. */
  maxRetries?: number;
  /** The first backoff; each retry doubles it. Default 500 ms. */
  baseDelayMs?: number;
  /** The largest backoff. Default 8000 ms. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown. Default 60 s. */
  maxRetryAfterMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 8000,
  maxRetryAfterMs: 60_000,
};

/**
 * The wait before retry number `retry` (1, 2, ...): `base * 2^(retry-1)`, capped, of which a
 * random half is dropped ("equal jitter"), so clients that failed together do not come back
 * together, yet every wait is at least half the nominal one.
 */
export function backoffMs(policy: RetryPolicy, retry: number, random = Math.random): number {
  const nominal = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return nominal / 2 + random() * (nominal / 2);
}

/** `Retry-After` in milliseconds (delay-seconds or an HTTP date); null when absent or bad. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
