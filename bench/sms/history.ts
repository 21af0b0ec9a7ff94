import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createKnex, createStores, type KeysetPosition } from '@switchboard/db';
import { CursorCodec } from '../../apps/api/src/pagination/cursor';
import { startTsChild, waitForHttp } from '../lib/children';
import { freePort, httpGet } from '../lib/http';
import { log, progressBar, step } from '../lib/progress';
import { summarize, type LatencySummary } from '../lib/stats';
import type { SmsSeed } from './seed';
import { UNLIMITED_API_RATE } from '../lib/env';

export interface DepthResult {
  depth: number;
  cursorFrom: string;
  http: LatencySummary;
}
export interface HistoryResult {
  depths: DepthResult[];
  ratio: number;
  orderViolations: number;
  plan: string;
  planChecks: { usesOrderIndex: boolean; hasSortNode: boolean };
}

interface Item {
  id: string;
  created_at: string;
}
interface Page {
  data: Item[];
  has_more: boolean;
  cursor: string | null;
}

const WALK_PAGE = 100;
const before = (a: Item, b: Item) =>
  a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id);

/**
 * Page latency of GET /receptionists/{id}/sms at cursor depths, over HTTP against one API
 * process: the walked depth checks the order and proves that cursors built from SQL (row at
 * OFFSET depth-1, encoded with the API's own CursorCodec and secret) are byte-for-byte the
 * served ones; the deep ones are built that way. Depths are interleaved round-robin.
 */
export async function measureHistory(
  seed: SmsSeed,
  opts: { depths: number[]; walkTo: number; page: number; samples: number; warmup: number },
): Promise<HistoryResult> {
  const secret = randomBytes(24).toString('hex');
  const codec = new CursorCodec(secret);
  const port = await freePort();
  const api = startTsChild('api (history)', 'apps/api/src/server.ts', {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: seed.benchUrl,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    INGEST_TOKEN: randomBytes(24).toString('hex'),
    CURSOR_SECRET: secret,
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...UNLIMITED_API_RATE,
  });
  const base = `http://127.0.0.1:${port}/api/v1/receptionists/${seed.receptionistId}/sms`;
  await step('starting the API', () => waitForHttp(api, `http://127.0.0.1:${port}/healthz`));
  const auth = { authorization: `Bearer ${seed.readKey}` };
  const get = async (limit: number, cursor: string | null): Promise<Page> => {
    const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await httpGet(`${base}?limit=${limit}${q}`, auth);
    if (res.status !== 200) throw new Error(`history → ${res.status}: ${res.body.slice(0, 200)}`);
    return JSON.parse(res.body) as Page;
  };
  const pg = new Client({ connectionString: seed.benchUrl });
  await pg.connect();
  const knex = createKnex(seed.benchUrl, { poolMax: 1 });
  try {
    const sqlPosition = async (depth: number): Promise<KeysetPosition> => {
      const r = await pg.query<{ created_at: Date; id: string }>(
        `SELECT created_at, id FROM sms_messages WHERE tenant_id = $1 AND receptionist_id = $2
          ORDER BY created_at DESC, id DESC OFFSET $3 LIMIT 1`,
        [seed.tenantId, seed.receptionistId, depth - 1],
      );
      const row = r.rows[0];
      if (!row) throw new Error(`no message at depth ${depth}`);
      return { t: row.created_at.getTime(), id: row.id };
    };
    const cursors = new Map<number, { cursor: string | null; from: string }>([
      [0, { cursor: null, from: 'first page' }],
    ]);
    // Walk to `walkTo`, checking the order, then compare with the SQL-built cursor there.
    let orderViolations = 0;
    if (opts.walkTo > 0) {
      const pages = Math.ceil(opts.walkTo / WALK_PAGE);
      const bar = progressBar(`walking to depth ${opts.walkTo}`.padEnd(36), pages, 'pages');
      let cursor: string | null = null;
      let prev: Item | null = null;
      for (let p = 1; p <= pages; p++) {
        const body = await get(WALK_PAGE, cursor);
        for (const item of body.data) {
          if (prev && !before(prev, item)) orderViolations++;
          prev = item;
        }
        cursor = body.cursor;
        bar.update(p);
      }
      bar.stop();
      const built = codec.encode('sms', seed.tenantId, await sqlPosition(pages * WALK_PAGE));
      if (built !== cursor) throw new Error('the SQL-built cursor differs from the walked one');
      log(
        `  walked ${pages * WALK_PAGE} messages (order violations: ${orderViolations}); SQL cursor equal`,
      );
    }
    for (const depth of opts.depths.filter((d) => d > 0)) {
      const c = codec.encode('sms', seed.tenantId, await sqlPosition(depth));
      cursors.set(depth, {
        cursor: c,
        from: depth === opts.walkTo ? 'HTTP walk = SQL' : 'SQL OFFSET + CursorCodec',
      });
    }

    const samples = new Map<number, number[]>(opts.depths.map((d) => [d, []]));
    const rounds = opts.warmup + opts.samples;
    const lat = progressBar(`page latency, limit=${opts.page}`.padEnd(36), rounds, 'rounds');
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < opts.depths.length; k++) {
        const depth = opts.depths[(round + k) % opts.depths.length] as number;
        const t0 = performance.now();
        const body = await get(opts.page, cursors.get(depth)?.cursor ?? null);
        const ms = performance.now() - t0;
        if (body.data.length !== opts.page) throw new Error(`short page at depth ${depth}`);
        if (round >= opts.warmup) samples.get(depth)?.push(ms);
      }
      lat.update(round + 1);
    }
    lat.stop();
    const depths = opts.depths.map((depth) => ({
      depth,
      cursorFrom: cursors.get(depth)?.from ?? '',
      http: summarize(samples.get(depth) ?? []),
    }));

    // EXPLAIN (ANALYZE, BUFFERS) of the exact SQL the store sends at the deepest depth.
    const deepest = Math.max(...opts.depths);
    const after = await sqlPosition(deepest);
    const captured: { sql: string; bindings: unknown[] }[] = [];
    const onQuery = (q: { sql: string; bindings: unknown[] }) => captured.push(q);
    knex.on('query', onQuery);
    await createStores(knex).sms.listForReceptionist(
      seed.tenantId,
      seed.receptionistId,
      {},
      { limit: opts.page, after },
    );
    knex.off('query', onQuery);
    const q = captured[captured.length - 1];
    if (!q) throw new Error('could not capture the list query');
    const explain = async () =>
      (
        await pg.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.bindings)
      ).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    await explain();
    const plan = await explain();
    const p50 = (d: number) => depths.find((x) => x.depth === d)?.http.p50 ?? Number.NaN;
    return {
      depths,
      ratio: p50(deepest) / p50(0),
      orderViolations,
      plan,
      planChecks: {
        // The order index, or on the partitioned table each partition's copy of it (a
        // Merge Append of index scans, whose "Sort Key" line is no sort node).
        usesOrderIndex:
          /Index Scan( Backward)? using (sms_receptionist_order_idx|sms_messages_\w+_receptionist_id_created_at_id_idx)/.test(
            plan,
          ),
        hasSortNode: /^\s*(->\s*)?(Incremental )?Sort\s+\(/m.test(plan),
      },
    };
  } finally {
    await api.stop();
    await knex.destroy();
    await pg.end();
  }
}
