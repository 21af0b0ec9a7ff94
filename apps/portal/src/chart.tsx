import type { WebhookStats } from './api';

const W = 600;
const H = 120;
const DAY_MIN = 24 * 60;

/** The minute's position across the 24 hours of the window, 0..W. */
const xOf = (stats: WebhookStats, start: string): number =>
  // The current minute starts less than a minute before the right edge: keep it drawn.
  Math.min(W - 4, ((Date.parse(start) - Date.parse(stats.since)) / 60_000 / DAY_MIN) * W);

/**
 * Delivery health as two small SVG pictures (no chart library): deliveries per minute
 * (succeeded stacked under failed) and p50 / p99 attempt latency, over the last 24 hours.
 * Each has a text alternative with the totals, so the numbers are not only in a picture.
 */
export function HealthCharts({ stats }: { stats: WebhookStats }) {
  const { totals, buckets } = stats;
  const peak = Math.max(1, ...buckets.map((b) => b.succeeded + b.failed));
  const slowest = Math.max(1, ...buckets.map((b) => b.p99_ms ?? 0));
  const y = (v: number, max: number) => H - (v / max) * (H - 8);
  const bar = Math.max(4, W / DAY_MIN);
  const latency = buckets.filter((b) => b.p50_ms !== null);
  const line = (pick: (b: (typeof latency)[number]) => number) =>
    latency
      .map((b) => `${xOf(stats, b.start).toFixed(1)},${y(pick(b), slowest).toFixed(1)}`)
      .join(' ');
  const summary =
    `Last 24 hours: ${totals.succeeded} delivered, ${totals.failed} failed; ` +
    `latency p50 ${totals.p50_ms ?? '—'} ms, p99 ${totals.p99_ms ?? '—'} ms.`;
  return (
    <div class="charts">
      <p data-testid="health-summary">{summary}</p>
      <figure>
        <figcaption>Deliveries per minute (green: delivered, red: failed), peak {peak}</figcaption>
        <svg
          viewBox={`0 0 ${W} ${H}`}
          preserveAspectRatio="none"
          role="img"
          aria-label={`Deliveries per minute. ${summary}`}
        >
          <line class="axis" x1="0" y1={H} x2={W} y2={H} />
          {buckets.map((b) => {
            const x = xOf(stats, b.start);
            const ok = y(b.succeeded, peak);
            const all = y(b.succeeded + b.failed, peak);
            return (
              <g key={b.start}>
                <rect class="ok" x={x} y={ok} width={bar} height={H - ok} />
                <rect class="bad" x={x} y={all} width={bar} height={ok - all} />
              </g>
            );
          })}
        </svg>
      </figure>
      <figure>
        <figcaption>
          Latency per minute in ms (dark: p50, orange: p99), up to {slowest} ms
        </figcaption>
        <svg
          viewBox={`0 0 ${W} ${H}`}
          preserveAspectRatio="none"
          role="img"
          aria-label={`Latency. ${summary}`}
        >
          <line class="axis" x1="0" y1={H} x2={W} y2={H} />
          <polyline class="p99" points={line((b) => b.p99_ms ?? 0)} />
          <polyline class="p50" points={line((b) => b.p50_ms ?? 0)} />
          {latency.map((b) => (
            <circle
              key={b.start}
              class="p99"
              cx={xOf(stats, b.start)}
              cy={y(b.p99_ms ?? 0, slowest)}
              r="2"
            />
          ))}
        </svg>
      </figure>
    </div>
  );
}
