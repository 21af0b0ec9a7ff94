/** A positive integer from the environment (benchmark knobs), or the default. */
export const envInt = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
};

/**
 * Per-key rate limits far above any benchmark's load, for the API processes benchmarks
 * start: the figures include the limiter (its Redis leases), never its 429s. The measured
 * key's tenant also gets LIFTED_KEY_LIMIT, so a tenant limit cannot bring the 429s back.
 */
export const UNLIMITED_API_RATE = {
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
} as const;

/** The measured key's own limit (its tenant's, set by TenantsStore.setRateLimit). */
export const LIFTED_KEY_LIMIT = { perSecond: 1_000_000, burst: 1_000_000 } as const;
