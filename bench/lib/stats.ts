/** Latency summary in milliseconds (nearest-rank percentiles). */
export interface LatencySummary {
  samples: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] as number;
}

/** The median of the finite values (NaN when there are none). */
export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const round = (n: number, digits = 3): number => Number(n.toFixed(digits));

export function summarize(samplesMs: readonly number[]): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    samples: sorted.length,
    min: round(sorted[0] ?? Number.NaN),
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
    mean: round(sum / Math.max(1, sorted.length)),
  };
}

/** Times `run` `count` times in sequence after `warmup` untimed runs. */
export async function timeSequential(
  count: number,
  warmup: number,
  run: () => Promise<void>,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await run();
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await run();
    out.push(performance.now() - t0);
  }
  return out;
}

/** Renders rows as an aligned plain-text table (first row = header). */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ');
  const [head, ...body] = rows;
  if (!head) return '';
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(head), rule, ...body.map(line)].join('\n');
}
