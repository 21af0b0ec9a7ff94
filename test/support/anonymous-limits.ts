/**
 * Small buckets for requests without a valid credential (5 at once, 1 a second), so a
 * handful of requests empties one (docs/API.md, Rate limits).
 */
export const SMALL_ANONYMOUS_LIMITS = {
  UNAUTHENTICATED_RATE_LIMIT_PER_SECOND: '1',
  UNAUTHENTICATED_RATE_LIMIT_BURST: '5',
};

/** The i-th made-up API key, well-formed and unknown: an Authorization field value. */
export const bogusKey = (i: number): string => `Bearer sk_live_${String(i).padStart(32, '0')}`;
