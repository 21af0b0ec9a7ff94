import request from 'supertest';
import { newTimeOrderedId, type StoredEvent } from '@switchboard/db';
import { buildEnvelope, emit, emitMany } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { addPastDays, captureStatements, partitionsOf, planOf, todayOf } from '../support/plans';
import { addReceptionist } from '../support/receptionist';

// GET /events and GET /events/{id} (docs/API.md, Events): a tenant's events newest first as
// the envelopes webhooks carry, keyset pages without gaps or repeats, filters, the history
// kept by the tenant's retention, other tenants' events invisible, bad input a 400; reads
// pruned to the days they may hold.
let ctx: TestContext;
let a: { tenantId: string; auth: string };
let b: { tenantId: string; auth: string };
let rcpA1: string;
let rcpA2: string;
let rcpB: string;

const DAY_MS = 86_400_000;

beforeAll(async () => {
  ctx = await createTestContext();
  await addPastDays(ctx.deps.knex, 'events', 5);
  a = await ctx.tenant(['read']);
  b = await ctx.tenant(['read']);
  rcpA1 = await addReceptionist(ctx, a.tenantId);
  rcpA2 = await addReceptionist(ctx, a.tenantId);
  rcpB = await addReceptionist(ctx, b.tenantId);
});
afterAll(() => ctx.close());

const callStarted = (tenantId: string, receptionistId: string, n: number) => ({
  tenantId,
  receptionistId,
  type: 'call.started' as const,
  data: {
    call_id: `call_${n}`,
    direction: 'inbound' as const,
    from: '+14155550100',
    to: '+14155550101',
    started_at: '2026-11-21T10:15:00.000Z',
  },
});

const usage = (tenantId: string, minutes: number) => ({
  tenantId,
  type: 'usage.threshold' as const,
  data: {
    threshold: 80 as const,
    minutes_used: minutes,
    minutes_included: 100,
    billing_period_end: '2026-12-01T00:00:00.000Z',
  },
});

/** An event dated `at` (a day partition of the past, or the archive), as emit() writes it. */
async function eventAt(tenantId: string, at: Date, type = 'usage.threshold'): Promise<string> {
  const id = newTimeOrderedId('evt', at);
  await ctx.deps.knex('events').insert({
    id,
    tenant_id: tenantId,
    type,
    data: usage(tenantId, 1).data,
    created_at: at,
    published_at: at,
    fanned_out_at: at,
  });
  return id;
}

const get = (path: string, auth: string) =>
  request(ctx.app).get(`/api/v1${path}`).set('Authorization', auth);

/** Every event of the list for `query`, page after page of `limit`. */
async function walk(auth: string, query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const q: string = `${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await get(`/events?${q}`, auth).expect(200);
    ids.push(...(res.body.data as Array<{ id: string }>).map((e) => e.id));
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    if (!res.body.has_more) {
      expect(res.body.cursor).toBeNull();
      return ids;
    }
    cursor = res.body.cursor as string;
  }
  throw new Error('the list did not end');
}

/** The tenant's event ids newest first, read straight from Postgres. */
const newestFirst = async (tenantId: string): Promise<string[]> =>
  (await ctx.deps
    .knex('events')
    .where({ tenant_id: tenantId })
    .andWhere('created_at', '>', new Date(Date.now() - 30 * DAY_MS))
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .pluck('id')) as string[];

describe('GET /events', () => {
  it('pages through every event newest first, ties broken by id, none twice or missing', async () => {
    const t = await ctx.tenant(['read']);
    const r = await addReceptionist(ctx, t.tenantId);
    const { knex } = ctx.deps;
    // Events that share their time (one emitMany), others alone, and some days ago.
    await knex.transaction((trx) =>
      emitMany(
        trx,
        Array.from({ length: 7 }, (_, i) => callStarted(t.tenantId, r, i)),
      ),
    );
    for (let i = 0; i < 6; i++) await emit(knex, usage(t.tenantId, i));
    for (const days of [1, 2, 4]) await eventAt(t.tenantId, new Date(Date.now() - days * DAY_MS));
    const expected = await newestFirst(t.tenantId);
    expect(expected).toHaveLength(16);

    for (const limit of [1, 3, 7, 100]) {
      expect(await walk(t.auth, '', limit)).toEqual(expected);
    }

    // Events written while a walk is under way are newer than its cursor: the walk goes on
    // exactly where it was.
    const first = await get('/events?limit=5', t.auth).expect(200);
    await emit(knex, usage(t.tenantId, 99));
    const rest: string[] = [];
    let cursor = first.body.cursor as string | null;
    while (cursor) {
      const page = await get(`/events?limit=5&cursor=${cursor}`, t.auth).expect(200);
      rest.push(...(page.body.data as Array<{ id: string }>).map((e) => e.id));
      cursor = page.body.cursor as string | null;
    }
    expect([...first.body.data.map((e: { id: string }) => e.id), ...rest]).toEqual(expected);
  });

  it('answers each event as the exact envelope a webhook carries, operational events too', async () => {
    const t = await ctx.tenant(['read']);
    const r = await addReceptionist(ctx, t.tenantId);
    const { knex } = ctx.deps;
    const callId = await emit(knex, callStarted(t.tenantId, r, 1));
    const failingId = await emit(knex, {
      tenantId: t.tenantId,
      type: 'webhook.failing',
      data: {
        subscription_id: '6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b',
        url: 'https://example.com/hook',
        consecutive_failures: 10,
        disable_threshold: 20,
        last_status_code: 503,
        last_error: null,
      },
    });
    const res = await get('/events', t.auth).expect(200);
    const stored = (await Promise.all(
      [failingId, callId].map((id) => ctx.deps.stores.events.get(id)),
    )) as StoredEvent[];
    // Same keys in the same order as the body the worker signs and POSTs.
    expect(JSON.stringify(res.body.data)).toBe(JSON.stringify(stored.map(buildEnvelope)));
    expect(res.body.data[0]).not.toHaveProperty('receptionist_id');
    expect(res.body.data[1]).toMatchObject({ event: 'call.started', receptionist_id: r });

    const one = await get(`/events/${callId}`, t.auth).expect(200);
    expect(JSON.stringify(one.body)).toBe(JSON.stringify(buildEnvelope(stored[1]!)));
  });

  it('filters by type (repeatable), time and receptionist, and the filters combine', async () => {
    const { knex } = ctx.deps;
    const c1 = await emit(knex, callStarted(a.tenantId, rcpA1, 1));
    const c2 = await emit(knex, callStarted(a.tenantId, rcpA2, 2));
    const u = await emit(knex, usage(a.tenantId, 5));
    const old = await eventAt(a.tenantId, new Date(Date.now() - 3 * DAY_MS));
    await emit(knex, callStarted(b.tenantId, rcpB, 3));

    const ids = async (query: string) =>
      ((await get(`/events?${query}`, a.auth).expect(200)).body.data as Array<{ id: string }>).map(
        (e) => e.id,
      );
    expect(await ids('type=call.started')).toEqual([c2, c1]);
    expect(await ids('type=call.started&type=usage.threshold')).toEqual([u, c2, c1, old]);
    expect(await ids('type=call.missed')).toEqual([]);
    expect(await ids(`receptionist_id=${rcpA1}`)).toEqual([c1]);
    expect(await ids(`receptionist_id=${rcpA2}&type=usage.threshold`)).toEqual([]);

    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const threeDaysAgo = day(Date.now() - 3 * DAY_MS);
    expect(await ids(`created_from=${threeDaysAgo}&created_to=${threeDaysAgo}`)).toEqual([old]);
    expect(await ids(`created_to=${threeDaysAgo}`)).toEqual([old]);
    const now = new Date().toISOString();
    expect(await ids(`created_from=${day(Date.now() - DAY_MS)}&created_to=${now}`)).toEqual([
      u,
      c2,
      c1,
    ]);
  });

  it('keeps events as long as the tenant keeps its delivery history', async () => {
    const t = await ctx.tenant(['read']);
    const kept = await eventAt(t.tenantId, new Date(Date.now() - 2 * DAY_MS));
    const past = await eventAt(t.tenantId, new Date(Date.now() - 4 * DAY_MS));
    // The deployment's 30 days keep both.
    expect((await get('/events', t.auth).expect(200)).body.data).toHaveLength(2);
    await get(`/events/${past}`, t.auth).expect(200);

    await ctx.deps.stores.tenantRetention.set(t.tenantId, { deliveryDays: 3 });
    const list = await get('/events', t.auth).expect(200);
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([kept]);
    await get(`/events/${kept}`, t.auth).expect(200);
    const expired = await get(`/events/${past}`, t.auth).expect(404);
    expect(expired.body.error).toEqual({
      type: 'invalid_request_error',
      code: 'resource_not_found',
      message: `Event ${past} is older than this tenant's event history, which keeps 3 days`,
      param: 'id',
      doc_url: 'docs/API.md#error-resource_not_found',
    });
  });

  it("never shows another tenant's event: a 404 like an unknown id", async () => {
    const theirs = await emit(ctx.deps.knex, callStarted(b.tenantId, rcpB, 9));
    const unknown = newTimeOrderedId('evt', new Date());
    const foreign = await get(`/events/${theirs}`, a.auth).expect(404);
    const missing = await get(`/events/${unknown}`, a.auth).expect(404);
    expect(foreign.body.error).toEqual(missing.body.error);
    expect(foreign.body.error).toMatchObject({ code: 'resource_not_found', param: 'id' });
    await get(`/events/${theirs}`, b.auth).expect(200);
    expect(
      (await get('/events?limit=100', a.auth).expect(200)).body.data.map(
        (e: { id: string }) => e.id,
      ),
    ).not.toContain(theirs);
    // Another tenant's receptionist in the filter is not found either.
    const filter = await get(`/events?receptionist_id=${rcpB}`, a.auth).expect(404);
    expect(filter.body.error).toMatchObject({
      code: 'resource_not_found',
      param: 'receptionist_id',
    });
    await get('/events?receptionist_id=rcp_unknown', a.auth).expect(404);
  });

  it.each([
    ['limit=0', 'invalid_parameter', 'limit'],
    ['limit=101', 'invalid_parameter', 'limit'],
    ['limit=ten', 'invalid_parameter', 'limit'],
    ['cursor=not-a-cursor', 'invalid_cursor', 'cursor'],
    ['type=Call', 'invalid_parameter', 'type.0'],
    ['type=call.started&type=nope', 'invalid_parameter', 'type.1'],
    [Array.from({ length: 21 }, () => 'type=call.started').join('&'), 'invalid_parameter', 'type'],
    ['created_from=2026-02-30', 'invalid_parameter', 'created_from'],
    ['created_from=yesterday', 'invalid_parameter', 'created_from'],
    ['created_to=2026-11-21T25:00:00Z', 'invalid_parameter', 'created_to'],
    ['created_from=2026-11-22&created_to=2026-11-21', 'invalid_parameter', 'created_from'],
    ['receptionist_id=call_1', 'invalid_parameter', 'receptionist_id'],
  ])('refuses %s with a 400', async (query, code, param) => {
    const res = await get(`/events?${query}`, a.auth).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
    expect(res.body.error.message).toEqual(expect.any(String));
  });

  it("refuses another tenant's cursor and another list's cursor", async () => {
    const t = await ctx.tenant(['read']);
    for (let i = 0; i < 3; i++) await emit(ctx.deps.knex, usage(t.tenantId, i));
    const page = await get('/events?limit=1', t.auth).expect(200);
    expect(page.body.has_more).toBe(true);
    await get(`/events?limit=1&cursor=${page.body.cursor}`, t.auth).expect(200);
    const foreign = await get(`/events?cursor=${page.body.cursor}`, a.auth).expect(400);
    expect(foreign.body.error.code).toBe('invalid_cursor');
    await addReceptionist(ctx, t.tenantId);
    await addReceptionist(ctx, t.tenantId);
    const receptionists = await get('/receptionists?limit=1', t.auth).expect(200);
    const other = await get(`/events?cursor=${receptionists.body.cursor}`, t.auth).expect(400);
    expect(other.body.error.code).toBe('invalid_cursor');
  });
});

describe('GET /events/{id}', () => {
  it.each([['not-an-id'], ['evt_'], ['evt_has-dash'], [`evt_${'a'.repeat(65)}`], ['call_abc']])(
    'refuses the malformed id %s with a 400',
    async (id) => {
      const res = await get(`/events/${id}`, a.auth).expect(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'id' });
    },
  );

  it('needs a key (401) and the read scope, which every key has', async () => {
    const id = await emit(ctx.deps.knex, usage(a.tenantId, 1));
    await request(ctx.app).get(`/api/v1/events/${id}`).expect(401);
    await request(ctx.app).get('/api/v1/events').expect(401);
    const admin = await ctx.keyFor(a.tenantId, ['admin']);
    await get(`/events/${id}`, admin.auth).expect(200);
  });
});

describe('partition pruning', () => {
  it('reads one day for an id, and the days the retention keeps for a page', async () => {
    const t = await ctx.tenant(['read']);
    const id = await emit(ctx.deps.knex, usage(t.tenantId, 1));
    await ctx.deps.stores.tenantRetention.set(t.tenantId, { deliveryDays: 2 });
    const statements = await captureStatements(async () => {
      await get(`/events/${id}`, t.auth).expect(200);
      await get('/events', t.auth).expect(200);
    });
    const reads = statements.filter((s) => /from "events"/i.test(s.sql));
    expect(reads).toHaveLength(2);
    const [byId, page] = reads as [(typeof reads)[0], (typeof reads)[0]];
    // The id carries its time: only its day (and the next, within a second of midnight).
    const idDays = partitionsOf(await planOf(ctx.deps.knex, byId, false), 'events');
    expect(idDays).toContain(todayOf('events'));
    expect(idDays.length).toBeLessThanOrEqual(2);
    // Two days kept: nothing older than three days ago, nor the archive.
    const pageDays = partitionsOf(await planOf(ctx.deps.knex, page, false), 'events');
    const cutoff = `events_p${new Date(Date.now() - 3 * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;
    expect(pageDays).toContain(todayOf('events'));
    expect(
      pageDays.filter((p) => p === 'events_archive' || (/_p\d{8}$/.test(p) && p < cutoff)),
    ).toEqual([]);
  });
});
