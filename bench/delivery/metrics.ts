/** Reading the worker's Prometheus text exposition (only what the benchmark reports). */

export type Samples = Map<string, number>;

/** `name{labels} value` lines → map keyed by `name{labels}` exactly as written. */
export function parseMetrics(text: string): Samples {
  const out: Samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    if (cut < 0) continue;
    const value = Number(line.slice(cut + 1));
    if (Number.isFinite(value) || line.endsWith('Inf')) out.set(line.slice(0, cut), value);
  }
  return out;
}

/** The samples of `name` whose labels contain every `key="value"` of `match`. */
function select(samples: Samples, name: string, match: Record<string, string>): [string, number][] {
  const wants = Object.entries(match).map(([k, v]) => `${k}="${v}"`);
  return [...samples].filter(([key]) => {
    const brace = key.indexOf('{');
    const base = brace < 0 ? key : key.slice(0, brace);
    return base === name && wants.every((w) => key.includes(w));
  });
}

export function value(samples: Samples, name: string, match: Record<string, string> = {}): number {
  return select(samples, name, match).reduce((s, [, v]) => s + v, 0);
}

export interface HistogramSummary {
  count: number;
  meanMs: number;
  /** Quantiles interpolated inside buckets (Prometheus' histogram_quantile), in ms. */
  p50Ms: number;
  p99Ms: number;
}

/** Summary of histogram `name` between two scrapes (`before` may be empty). */
export function histogram(
  before: Samples,
  after: Samples,
  name: string,
  match: Record<string, string> = {},
): HistogramSummary {
  const delta = (n: string, m: Record<string, string> = match) =>
    value(after, n, m) - value(before, n, m);
  const count = delta(`${name}_count`);
  const sum = delta(`${name}_sum`);
  const buckets = new Map<number, number>();
  for (const [key, v] of select(after, `${name}_bucket`, match)) {
    const le = /le="([^"]+)"/.exec(key)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    const prev = before.get(key) ?? 0;
    buckets.set(bound, (buckets.get(bound) ?? 0) + v - prev);
  }
  const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
  const quantile = (q: number): number => {
    if (count === 0) return Number.NaN;
    const rank = q * count;
    let lower = 0;
    let lowerCount = 0;
    for (const [bound, cumulative] of sorted) {
      if (cumulative >= rank) {
        if (!Number.isFinite(bound)) return lower * 1000;
        const inBucket = cumulative - lowerCount;
        const frac = inBucket > 0 ? (rank - lowerCount) / inBucket : 0;
        return (lower + (bound - lower) * frac) * 1000;
      }
      lower = bound;
      lowerCount = cumulative;
    }
    return Number.NaN;
  };
  const r = (n: number) => Number(n.toFixed(2));
  return {
    count,
    meanMs: r(count ? (sum / count) * 1000 : Number.NaN),
    p50Ms: r(quantile(0.5)),
    p99Ms: r(quantile(0.99)),
  };
}
