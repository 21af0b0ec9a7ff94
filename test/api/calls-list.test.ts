import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { booking, insertCalls, transcript } from '../support/fixtures';
import { addReceptionist } from '../support/receptionist';

let ctx: TestContext;
let A: { tenantId: string; auth: string };
let B: { tenantId: string; auth: string };
let rcpA1: string;
let rcpA2: string;
let rcpB: string;
let callB: string;
const SAME = new Date('2026-11-20T12:00:00.000Z');

beforeAll(async () => {
  ctx = await createTestContext();
  A = await ctx.tenant(['read']);
  B = await ctx.tenant(['read']);
  rcpA1 = await addReceptionist(ctx, A.tenantId);
  rcpA2 = await addReceptionist(ctx, A.tenantId, { name: 'After Hours' });
  rcpB = await addReceptionist(ctx, B.tenantId, { name: 'Other' });
  // 25 calls share one started_at to the millisecond: only the id breaks those ties.
  await insertCalls(ctx.deps.knex, A.tenantId, rcpA1, 25, () => ({ startedAt: SAME }));
  await insertCalls(ctx.deps.knex, A.tenantId, rcpA1, 20, (i) => ({
    startedAt: new Date(SAME.getTime() - (i + 1) * 3_600_000),
    direction: i % 2 ? 'outbound' : 'inbound',
    status: i % 5 === 0 ? 'missed' : 'completed',
    transcript: i % 3 === 0 ? transcript : null,
    booking: i % 4 === 0 ? booking : null,
  }));
  await insertCalls(ctx.deps.knex, A.tenantId, rcpA2, 18, (i) => ({
    startedAt: new Date(SAME.getTime() - i * 1_800_000 + 7),
  }));
  callB = (
    await insertCalls(ctx.deps.knex, B.tenantId, rcpB, 3, () => ({ startedAt: SAME }))
  )[0] as string;
});
afterAll(() => ctx.close());

const get = (path: string, auth = A.auth) => request(ctx.app).get(path).set('Authorization', auth);

/** Every id of tenant A, in the contract's order, straight from SQL. */
const expectedOrder = async (where: Record<string, string> = {}) =>
  (
    await ctx.deps
      .knex('calls')
      .where({ tenant_id: A.tenantId, ...where })
      .orderBy([
        { column: 'started_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
  ).map((r: { id: string }) => r.id);

async function walkAll(first: string, limit: number, between?: (page: number) => Promise<void>) {
  const seen: string[] = [];
  let url: string | null = `${first}${first.includes('?') ? '&' : '?'}limit=${limit}`;
  for (let page = 0; url && page < 1000; page++) {
    const res = await get(url);
    expect(res.status).toBe(200);
    const items = res.body.calls ?? res.body.data;
    expect(items.length).toBeLessThanOrEqual(limit);
    seen.push(...items.map((c: { id: string }) => c.id));
    const next = res.body.next_cursor ?? res.body.cursor;
    if (res.body.has_more !== undefined) expect(res.body.has_more).toBe(next !== null);
    await between?.(page);
    url = next ? `${first}${first.includes('?') ? '&' : '?'}limit=${limit}&cursor=${next}` : null;
  }
  return seen;
}

describe('keyset walk', () => {
  it.each([[1], [7], [20], [100]])('limit %i: every call once, newest first', async (limit) => {
    expect(await walkAll('/api/v1/calls', limit)).toEqual(await expectedOrder());
  });

  it('per receptionist, with ties on started_at', async () => {
    expect(await walkAll(`/api/v1/receptionists/${rcpA1}/calls`, 4)).toEqual(
      await expectedOrder({ receptionist_id: rcpA1 }),
    );
  });

  it('neither skips nor repeats while calls are inserted during the walk', async () => {
    const before = await expectedOrder();
    const seen = await walkAll('/api/v1/calls', 6, async (page) => {
      // Newer calls (above the cursor), calls tied with SAME, and older ones (below it).
      await insertCalls(ctx.deps.knex, A.tenantId, rcpA2, 3, (i) => ({
        startedAt: new Date(SAME.getTime() + (i - 1) * 3_600_000 * (page + 1)),
      }));
    });
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
    // Whatever was seen is still in the contract's order.
    const order = await expectedOrder();
    expect(seen).toEqual(order.filter((id) => seen.includes(id)));
  });

  it('default limit is 20; 100 is allowed', async () => {
    expect((await get('/api/v1/calls')).body.calls).toHaveLength(20);
    expect((await get('/api/v1/calls?limit=100')).status).toBe(200);
  });

  it('the last page has next_cursor null / has_more false and cursor null', async () => {
    const one = await get(`/api/v1/receptionists/${rcpA2}/calls?limit=100`);
    expect(one.body).toMatchObject({ has_more: false, cursor: null });
    const all = await get(`/api/v1/calls?receptionist_id=${rcpA2}&limit=100`);
    expect(all.body.next_cursor).toBeNull();
  });
});

describe('cursors', () => {
  it('are interchangeable between the two call endpoints', async () => {
    const first = await get(`/api/v1/calls?receptionist_id=${rcpA1}&limit=5`);
    const viaPerRcp = await get(
      `/api/v1/receptionists/${rcpA1}/calls?limit=5&cursor=${first.body.next_cursor}`,
    );
    const viaTenant = await get(
      `/api/v1/calls?receptionist_id=${rcpA1}&limit=5&cursor=${first.body.next_cursor}`,
    );
    expect(viaPerRcp.status).toBe(200);
    expect(viaPerRcp.body.data.map((c: { id: string }) => c.id)).toEqual(
      viaTenant.body.calls.map((c: { id: string }) => c.id),
    );
    const back = await get(
      `/api/v1/calls?receptionist_id=${rcpA1}&limit=5&cursor=${viaPerRcp.body.cursor}`,
    );
    expect(back.status).toBe(200);
  });

  it.each([
    ['garbage', 'not-a-cursor'],
    ['empty parts', '.'],
    ['three parts', 'a.b.c'],
  ])('%s → 400 invalid_cursor', async (_n, cursor) => {
    const res = await get(`/api/v1/calls?cursor=${encodeURIComponent(cursor)}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'cursor' });
  });

  it('a tampered position fails verification', async () => {
    const { next_cursor } = (await get('/api/v1/calls?limit=2')).body;
    const [payload, sig] = next_cursor.split('.');
    const forged = Buffer.from(JSON.stringify([Date.now(), 'call_x'])).toString('base64url');
    expect(payload).not.toBe(forged);
    const res = await get(`/api/v1/calls?cursor=${forged}.${sig}`);
    expect(res.body.error.code).toBe('invalid_cursor');
  });

  it("another tenant's cursor is refused", async () => {
    const { next_cursor } = (await get('/api/v1/calls?limit=2')).body;
    const res = await get(`/api/v1/calls?cursor=${next_cursor}`, B.auth);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_cursor');
  });

  it('a receptionists-list cursor is refused on calls', async () => {
    await addReceptionist(ctx, A.tenantId, { name: 'Third' });
    const { cursor } = (await get('/api/v1/receptionists?limit=1')).body;
    expect((await get(`/api/v1/calls?cursor=${cursor}`)).body.error.code).toBe('invalid_cursor');
  });
});

describe('limits and filters', () => {
  it.each([['0'], ['101'], ['1.5'], ['-1'], ['ten']])('limit=%s → 400', async (limit) => {
    const res = await get(`/api/v1/calls?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'limit' });
    expect(res.body.error.message).toBe('limit must be an integer between 1 and 100');
  });

  it('direction and status narrow the list', async () => {
    const out = await walkAll('/api/v1/calls?direction=outbound', 50);
    expect(out).toEqual(
      (
        await ctx.deps
          .knex('calls')
          .where({ tenant_id: A.tenantId, direction: 'outbound' })
          .orderBy([
            { column: 'started_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
      ).map((r: { id: string }) => r.id),
    );
    const missed = await get(`/api/v1/receptionists/${rcpA1}/calls?status=missed&limit=100`);
    expect(missed.body.data.length).toBeGreaterThan(0);
    expect(missed.body.data.every((c: { status: string }) => c.status === 'missed')).toBe(true);
  });

  it('a bare date_to includes that whole UTC day; date_from is inclusive', async () => {
    const res = await get(
      '/api/v1/calls?date_from=2026-11-20T12:00:00.000Z&date_to=2026-11-20&limit=100',
    );
    const starts: string[] = res.body.calls.map((c: { started_at: string }) => c.started_at);
    expect(starts.length).toBeGreaterThanOrEqual(25);
    expect(starts.every((s) => s >= '2026-11-20T12:00:00.000Z' && s < '2026-11-21')).toBe(true);
    const day = await get('/api/v1/calls?date_from=2026-11-19&date_to=2026-11-19&limit=100');
    expect(
      day.body.calls.every((c: { started_at: string }) => c.started_at.startsWith('2026-11-19')),
    ).toBe(true);
  });

  it.each([
    ['direction=sideways', 'direction'],
    ['status=happy', 'status'],
    ['date_from=yesterday', 'date_from'],
    ['date_to=2026-13-45', 'date_to'],
    ['date_from=2026-02-30', 'date_from'],
    ['date_to=2026-02-29T10:00:00Z', 'date_to'],
    ['receptionist_id=nope', 'receptionist_id'],
  ])('%s → 400', async (query, param) => {
    const res = await get(`/api/v1/calls?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param });
  });

  it('date_from after date_to → 400', async () => {
    const res = await get('/api/v1/calls?date_from=2026-11-21&date_to=2026-11-20');
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('date_from');
  });

  it('receptionist_id makes the scope one_receptionist', async () => {
    expect((await get('/api/v1/calls')).body.scope).toBe('all_receptionists');
    const one = await get(`/api/v1/calls?receptionist_id=${rcpA2}`);
    expect(one.body.scope).toBe('one_receptionist');
    expect(
      one.body.calls.every((c: { receptionist_id: string }) => c.receptionist_id === rcpA2),
    ).toBe(true);
  });
});

describe('isolation', () => {
  it("another tenant's call, receptionist and receptionist filter are 404", async () => {
    expect((await get(`/api/v1/calls/${callB}`)).status).toBe(404);
    expect((await get(`/api/v1/receptionists/${rcpB}/calls`)).status).toBe(404);
    const filtered = await get(`/api/v1/calls?receptionist_id=${rcpB}`);
    expect(filtered.status).toBe(404);
    expect(filtered.body.error.param).toBe('receptionist_id');
    expect((await get(`/api/v1/calls/${callB}`, B.auth)).status).toBe(200);
  });

  it("tenant lists never contain another tenant's calls", async () => {
    const ids = await walkAll('/api/v1/calls', 100);
    expect(ids).not.toContain(callB);
  });
});

describe('list item shape', () => {
  it('has the contract fields and the booking hint', async () => {
    const res = await get(`/api/v1/receptionists/${rcpA1}/calls?limit=100`);
    const withBooking = res.body.data.find((c: { booking: unknown }) => c.booking !== null);
    expect(Object.keys(withBooking).sort()).toEqual(
      [
        'id',
        'direction',
        'status',
        'from',
        'to',
        'customer_name',
        'duration_seconds',
        'outcome',
        'started_at',
        'ended_at',
        'has_transcript',
        'has_recording',
        'receptionist_id',
        'receptionist_name',
        'booking',
        'livemode',
      ].sort(),
    );
    expect(withBooking.booking).toEqual({
      confirmation: booking.confirmation,
      date: booking.date,
      time: booking.time,
      service_type: booking.service_type,
    });
    expect(withBooking.receptionist_name).toBe('Front Desk');
  });
});
