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
    expect(await names({ q: '%' })).toEqual(['100% Plumbing_Co']);
    expect(await names({ q: 'g_c' })).toEqual(['100% Plumbing_Co']);
    expect(await names({ q: '_' })).toEqual(['100% Plumbing_Co']);
    expect(await names({ q: 'k\\s' })).toEqual(['Back\\slash Ltd']);
    expect(await names({ q: "O'Brien" })).toEqual([]);
    expect(await names({ q: 'O’Brien' })).toEqual(['Dan O’Brien']);
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
