import { Client } from 'pg';
import { createKnex, LeadsStore, type LeadSearchFilters } from '@switchboard/db';
import { httpGet } from '../lib/http';
import { progressBar } from '../lib/progress';
import { summarize, type LatencySummary } from '../lib/stats';
import { RARE_LAST_NAME } from './rows';

export interface SearchCase {
  label: string;
  filters: LeadSearchFilters;
  /** Measure this page (its cursor taken from the page before); default 1. */
  page?: number;
}

/** The searches measured on both tenants (the same filters; the data differ in size only). */
export const SEARCH_CASES: readonly SearchCase[] = [
  { label: 'no q (newest first)', filters: {} },
  { label: 'q=son (common: ~20% of names)', filters: { q: 'son' } },
  { label: 'q=ingrid (1% of names)', filters: { q: 'ingrid' } },
  { label: 'q=gustafson (0.4%: between the plans)', filters: { q: 'gustafson' } },
  { label: 'q=son, 2nd page', filters: { q: 'son' }, page: 2 },
  {
    label: `q=${RARE_LAST_NAME.toLowerCase()} (rare: 1 in 50,000)`,
    filters: { q: RARE_LAST_NAME.toLowerCase() },
  },
  { label: 'q=0001234 (phone digits)', filters: { q: '0001234' } },
  { label: 'q=4321@ (email fragment)', filters: { q: '4321@' } },
  { label: 'status=won', filters: { status: 'won' } },
  { label: 'tag=vip', filters: { tag: 'vip' } },
  { label: 'q=son, status=won', filters: { q: 'son', status: 'won' } },
];

const query = (f: LeadSearchFilters, cursor?: string): string => {
  const p = new URLSearchParams({ limit: '10' });
  if (cursor) p.set('cursor', cursor);
  if (f.q) p.set('q', f.q);
  if (f.status) p.set('status', f.status);
  if (f.tag) p.set('tag', f.tag);
  return p.toString();
};

/**
 * p50 etc. of `samples` sequential HTTP searches per case and tenant (after `warmup`), the
 * tenants and cases interleaved in every round so that drift in the machine's load hits
 * all of them alike. Returns one summary map per key, in the order of `keys`.
 */
export async function timeSearches(
  apiBase: string,
  keys: readonly string[],
  samples: number,
  warmup: number,
): Promise<Array<Map<string, LatencySummary>>> {
  const times = keys.map(() => new Map<string, number[]>(SEARCH_CASES.map((c) => [c.label, []])));
  // The cursor of page 2 of each such case, per key: taken from page 1 as a client would.
  const cursors = new Map<string, string>();
  for (const key of keys) {
    for (const c of SEARCH_CASES.filter((x) => (x.page ?? 1) === 2)) {
      const res = await httpGet(`${apiBase}/api/v1/leads/search?${query(c.filters)}`, {
        authorization: `Bearer ${key}`,
      });
      const cursor = (JSON.parse(res.body) as { cursor: string | null }).cursor;
      if (!cursor) throw new Error(`${c.label}: no second page`);
      cursors.set(`${key} ${c.label}`, cursor);
    }
  }
  const total = (samples + warmup) * SEARCH_CASES.length * keys.length;
  const bar = progressBar('searches'.padEnd(28), total, 'requests');
  for (let round = 0; round < samples + warmup; round++) {
    for (const c of SEARCH_CASES) {
      for (let k = 0; k < keys.length; k++) {
        const key = keys[(round + k) % keys.length] as string;
        const t0 = performance.now();
        const cursor = cursors.get(`${key} ${c.label}`);
        const res = await httpGet(`${apiBase}/api/v1/leads/search?${query(c.filters, cursor)}`, {
          authorization: `Bearer ${key}`,
        });
        const ms = performance.now() - t0;
        if (res.status !== 200)
          throw new Error(`${c.label} → ${res.status}: ${res.body.slice(0, 200)}`);
        if (round >= warmup) times[(round + k) % keys.length]?.get(c.label)?.push(ms);
        bar.increment();
      }
    }
  }
  bar.stop();
  return times.map((m) => new Map([...m].map(([label, v]) => [label, summarize(v)])));
}

/** EXPLAIN (ANALYZE, BUFFERS) of the exact SQL LeadsStore.search sends, per case. */
export async function explainSearches(url: string, tenantId: string): Promise<Map<string, string>> {
  const knex = createKnex(url, { poolMax: 1 });
  const pg = new Client({ connectionString: url });
  await pg.connect();
  const plans = new Map<string, string>();
  try {
    const store = new LeadsStore(knex);
    for (const c of SEARCH_CASES) {
      const captured: { sql: string; bindings: unknown[] }[] = [];
      const onQuery = (q: { sql: string; bindings: unknown[] }) => captured.push(q);
      knex.on('query', onQuery);
      let after = null;
      if ((c.page ?? 1) === 2) {
        knex.off('query', onQuery);
        after = (await store.search(tenantId, c.filters, { limit: 10 })).next;
        knex.on('query', onQuery);
      }
      await store.search(tenantId, c.filters, { limit: 10, after });
      knex.off('query', onQuery);
      const q = captured[captured.length - 1];
      if (!q) throw new Error('no query captured');
      const sql = q.sql;
      // Twice: the first run also warms the planner's caches.
      await pg.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, q.bindings);
      const r = await pg.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS) ${sql}`,
        q.bindings,
      );
      plans.set(c.label, r.rows.map((row) => row['QUERY PLAN']).join('\n'));
    }
  } finally {
    await pg.end();
    await knex.destroy();
  }
  return plans;
}

export const usesSeqScan = (plan: string): boolean => /Seq Scan/.test(plan);
