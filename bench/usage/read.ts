import { Client } from 'pg';
import { billingPeriod, UsageStore, type Knex } from '@switchboard/db';
import { httpGet } from '../lib/http';
import { progressBar } from '../lib/progress';
import { summarize, type LatencySummary } from '../lib/stats';

export interface ReadResult {
  latency: LatencySummary;
  /** What the API answered (checked against the seed). */
  callsCompleted: number;
  minutesUsed: number;
}

/**
 * GET /api/v1/usage?period=… for each tenant, one request per tenant per round, alternating
 * which goes first, `warmup` rounds untimed. Sequential: latency, not throughput.
 */
export async function measureReads(
  base: string,
  period: string,
  keys: Record<'big' | 'small', string>,
  opts: { warmup: number; samples: number },
): Promise<Record<'big' | 'small', ReadResult>> {
  const samples: Record<'big' | 'small', number[]> = { big: [], small: [] };
  const last: Record<string, { minutes_used: number; calls_completed: number }> = {};
  const bar = progressBar(
    'GET /usage, big and small'.padEnd(36),
    opts.warmup + opts.samples,
    'rounds',
  );
  for (let round = 0; round < opts.warmup + opts.samples; round++) {
    const order = round % 2 ? (['big', 'small'] as const) : (['small', 'big'] as const);
    for (const which of order) {
      const t0 = performance.now();
      const res = await httpGet(`${base}/api/v1/usage?period=${period}`, {
        authorization: `Bearer ${keys[which]}`,
      });
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`GET /usage → ${res.status}: ${res.body}`);
      if (round >= opts.warmup) samples[which].push(ms);
      else last[which] = JSON.parse(res.body);
    }
    bar.increment();
  }
  bar.stop();
  const result = (which: 'big' | 'small'): ReadResult => ({
    latency: summarize(samples[which]),
    callsCompleted: last[which]?.calls_completed ?? Number.NaN,
    minutesUsed: last[which]?.minutes_used ?? Number.NaN,
  });
  return { big: result('big'), small: result('small') };
}

/** EXPLAIN (ANALYZE, BUFFERS) of the store's own usage read, captured from knex. */
export async function explainRead(
  knex: Knex,
  url: string,
  tenantId: string,
  period: string,
): Promise<string[]> {
  let captured: { sql: string; bindings: readonly unknown[] } | null = null;
  const listener = (q: { sql: string; bindings: readonly unknown[] }) => {
    captured ??= q;
  };
  knex.on('query', listener);
  const [year, month] = period.split('-').map(Number);
  await new UsageStore(knex).get(tenantId, billingPeriod(year as number, month as number));
  knex.off('query', listener);
  const q = captured as { sql: string; bindings: readonly unknown[] } | null;
  if (!q) throw new Error('the usage read issued no query');
  // The captured SQL is in the driver's own form ($1, $2...): run it on a plain client.
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${q.sql}`,
      [...q.bindings],
    );
    return plan.rows.map((r) => r['QUERY PLAN']);
  } finally {
    await client.end();
  }
}
