import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';

// GET /api/v1/leads/search: q (name fragment, phone digits, email), status, tag, limits,
// keyset paging, and LIKE wildcards matched literally.
let ctx: TestContext;
let auth: string;

beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth } = await ctx.tenant(['write']));
  const leads = [
    {
      name: 'Dana Whitfield',
      phone: '+14155550101',
      email: 'dana@whitfield.example',
      tags: ['vip'],
    },
    { name: 'Dan O’Brien', phone: '+14155550102', status: 'contacted' },
    { name: 'Jordan Danvers', email: 'jd@example.com', tags: ['vip', 'spring'] },
    { name: '100% Plumbing_Co', phone: '+442079460958' },
    { name: 'Back\\slash Ltd', email: 'office@backslash.example' },
    { name: 'Zed', phone: '+14155550199', status: 'won' },
  ];
  for (const lead of leads) {
    const res = await request(ctx.app).post('/api/v1/leads').set('Authorization', auth).send(lead);
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  }
  // 25 more, to page through.
  for (let i = 0; i < 25; i++) {
    await request(ctx.app)
      .post('/api/v1/leads')
      .set('Authorization', auth)
      .send({ name: `Paging Person ${i}`, phone: `+1212555${String(1000 + i)}`, tags: ['bulk'] });
  }
});
afterAll(() => ctx.close());

const search = (query: Record<string, string | number>) =>
  request(ctx.app).get('/api/v1/leads/search').query(query).set('Authorization', auth);
const names = async (query: Record<string, string | number>) => {
  const res = await search(query);
  expect(res.status).toBe(200);
  return (res.body.data as Array<{ name: string }>).map((l) => l.name).sort();
};

describe('lead search', () => {
  it('matches a name fragment anywhere, case-insensitively', async () => {
    expect(await names({ q: 'dan' })).toEqual(['Dan O’Brien', 'Dana Whitfield', 'Jordan Danvers']);
    expect(await names({ q: 'WHITF' })).toEqual(['Dana Whitfield']);
  });

  it('matches phone digits, however the number is written', async () => {
    expect(await names({ q: '5550102' })).toEqual(['Dan O’Brien']);
    expect(await names({ q: '+44 20 7946' })).toEqual(['100% Plumbing_Co']);
    expect(await names({ q: '(415) 555-0199' })).toEqual(['Zed']);
  });

  it('matches an email fragment', async () => {
    expect(await names({ q: 'jd@example' })).toEqual(['Jordan Danvers']);
    expect(await names({ q: 'backslash.EXAMPLE' })).toEqual(['Back\\slash Ltd']);
  });

  it('takes %, _ and \\ literally', async () => {
    expect(await names({ q: '100%' })).toEqual(['100% Plumbing_Co']);
    expect(await names({ q: '%' })).toEqual([]); // a prefix: no name starts with %
    expect(await names({ q: 'g_c' })).toEqual(['100% Plumbing_Co']);
    expect(await names({ q: '_' })).toEqual([]);
    expect(await names({ q: '10' })).toEqual(['100% Plumbing_Co']);
    expect(await names({ q: 'k\\s' })).toEqual(['Back\\slash Ltd']);
    expect(await names({ q: "O'Brien" })).toEqual([]);
    expect(await names({ q: 'O’Brien' })).toEqual(['Dan O’Brien']);
  });

  it('one or two characters match the start of a name, an email or a phone', async () => {
    expect(await names({ q: 'da' })).toEqual(['Dan O’Brien', 'Dana Whitfield']);
    expect(await names({ q: 'J' })).toEqual(['Jordan Danvers']);
    expect(await names({ q: 'of' })).toEqual(['Back\\slash Ltd']); // office@…
    expect(await names({ q: '44' })).toEqual(['100% Plumbing_Co']); // +44…
  });

  it('filters by status and tag, alone or with q', async () => {
    expect(await names({ status: 'won' })).toEqual(['Zed']);
    expect(await names({ tag: 'vip' })).toEqual(['Dana Whitfield', 'Jordan Danvers']);
    expect(await names({ tag: 'vip', q: 'jordan' })).toEqual(['Jordan Danvers']);
    expect(await names({ status: 'contacted', q: 'dana' })).toEqual([]);
  });

  it('pages newest first with a cursor; default limit 10; a blank q is no filter', async () => {
    const first = await search({ tag: 'bulk' });
    expect(first.body.data).toHaveLength(10);
    expect(first.body.has_more).toBe(true);
    const seen: Array<{ name: string; created_at: string; id: string }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await search({ tag: 'bulk', limit: 7, ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      seen.push(...res.body.data);
      cursor = res.body.cursor;
      expect(cursor === null).toBe(!res.body.has_more);
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(4);
    expect(seen.map((l) => l.name).sort()).toEqual(
      Array.from({ length: 25 }, (_, i) => `Paging Person ${i}`).sort(),
    );
    // Strictly newest first by (created_at, id): nothing skipped, nothing repeated.
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1], seen[i]] as [(typeof seen)[0], (typeof seen)[0]];
      expect(a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id)).toBe(
        true,
      );
    }
    const all = await search({ q: '   ', limit: 50 });
    expect(all.body.data).toHaveLength(31);
  });

  it('refuses bad parameters with 400', async () => {
    for (const [query, param, code] of [
      [{ limit: 0 }, 'limit', 'invalid_parameter'],
      [{ limit: 51 }, 'limit', 'invalid_parameter'],
      [{ limit: 'ten' }, 'limit', 'invalid_parameter'],
      [{ q: 'x'.repeat(201) }, 'q', 'invalid_parameter'],
      [{ status: 'hot' }, 'status', 'invalid_parameter'],
      [{ cursor: 'nope' }, 'cursor', 'invalid_cursor'],
    ] as const) {
      const res = await search(query);
      expect([res.status, res.body.error.code, res.body.error.param]).toEqual([400, code, param]);
    }
    expect((await search({ q: 'x'.repeat(200) })).status).toBe(200);
    // Another tenant's cursor is refused.
    const page = await search({ tag: 'bulk', limit: 1 });
    const other = await ctx.tenant(['read']);
    const res = await request(ctx.app)
      .get('/api/v1/leads/search')
      .query({ cursor: page.body.cursor })
      .set('Authorization', other.auth);
    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_cursor']);
  });
});

// At scale, a short q is answered from an index: the rows Postgres reads for a rare one- or
// two-character prefix stay within a small multiple of what the unfiltered first page reads
// (the baseline, measured here), where a scan would read the whole tenant.
interface PoolClient {
  acquireConnection(): Promise<{
    query(text: string, values: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  }>;
  releaseConnection(connection: unknown): Promise<void>;
}

describe('short searches at scale', () => {
  const SIZE = 20_000;
  let tenantId: string;

  beforeAll(async () => {
    ({ tenantId } = await ctx.tenant(['read']));
    await ctx.deps.knex.raw(
      `INSERT INTO leads (id, tenant_id, name, phone, email, source, created_at)
       SELECT 'lead_scale' || i, ?, chr(97 + i % 20) || 'name ' || i,
              '+1415' || lpad(i::text, 7, '0'), 'p' || i || '@example.com', 'api',
              now() - make_interval(secs => i)
         FROM generate_series(1, ?) AS i`,
      [tenantId, SIZE],
    );
    // A few rare ones: names starting "Zq", phones starting +97.
    await ctx.deps.knex.raw(
      `INSERT INTO leads (id, tenant_id, name, phone, source, created_at)
       SELECT 'lead_rare' || i, ?, 'Zq Rare ' || i, '+9715' || lpad(i::text, 7, '0'), 'api',
              now() - make_interval(days => 400 + i)
         FROM generate_series(1, 5) AS i`,
      [tenantId],
    );
    await ctx.deps.knex.raw('ANALYZE leads');
  });

  /** Rows every scan node of the search's own SQL read (EXPLAIN ANALYZE). */
  async function rowsRead(q: string | undefined): Promise<{ read: number; found: number }> {
    const captured: Array<{ sql: string; bindings: unknown[] }> = [];
    const listen = (data: { sql: string; bindings: unknown[] }) => captured.push(data);
    ctx.deps.knex.on('query', listen);
    let found: number;
    try {
      const page = await ctx.deps.stores.leads.search(
        tenantId,
        { livemode: true, q },
        { limit: 10 },
      );
      found = page.rows.length;
    } finally {
      ctx.deps.knex.removeListener('query', listen);
    }
    const search = captured.find((c) => /from "leads"/i.test(c.sql));
    if (!search) throw new Error('the search ran no query on leads');
    // The statement exactly as sent ($n placeholders), on a connection of the pool.
    const client = (ctx.deps.knex as unknown as { client: PoolClient }).client;
    const connection = await client.acquireConnection();
    let result: { rows: Array<Record<string, unknown>> };
    try {
      result = await connection.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${search.sql}`, [
        ...search.bindings,
      ]);
    } finally {
      await client.releaseConnection(connection);
    }
    type Node = Record<string, unknown> & { Plans?: Node[] };
    const sum = (n: Node): number =>
      (String(n['Node Type']).includes('Scan')
        ? Number(n['Actual Rows'] ?? 0) * Number(n['Actual Loops'] ?? 1) +
          Number(n['Rows Removed by Filter'] ?? 0) +
          Number(n['Rows Removed by Index Recheck'] ?? 0)
        : 0) + (n.Plans ?? []).reduce((acc, p) => acc + sum(p), 0);
    const plan = (result.rows[0]?.['QUERY PLAN'] as Array<{ Plan: Node }>)[0]?.Plan as Node;
    return { read: sum(plan), found };
  }

  it('a rare prefix of a name or a phone reads about as little as the first page', async () => {
    const baseline = await rowsRead(undefined);
    expect(baseline.found).toBe(10);
    for (const q of ['zq', 'Z', '97', '9']) {
      const { read, found } = await rowsRead(q);
      expect(found).toBe(5);
      expect(read).toBeLessThanOrEqual(10 * baseline.read);
    }
    // A common prefix is still found at once (by walking newest first).
    const common = await rowsRead('a');
    expect(common.found).toBe(10);
    expect(common.read).toBeLessThan(SIZE / 10);
  });
});
