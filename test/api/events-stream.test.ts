import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { newTimeOrderedId, type StoredEvent } from '@switchboard/db';
import { buildEnvelope, emit, emitMany } from '@switchboard/events';
import { startApiProcess } from '../support/api-process';
import { createTestContext, type TestContext } from '../support/context';
import { addReceptionist } from '../support/receptionist';
import { openSse, type SseClient } from '../support/sse';
import { waitFor } from '../support/wait';

// GET /events/stream (docs/API.md, Events) over real HTTP on 127.0.0.1: events arrive live
// (woken by the NOTIFY of the statement that writes them: the poll is set to 10 minutes
// here), resume after Last-Event-ID with exactly what was missed, also on another API
// process after the first one stopped; tenants see only their own events; a key has at most
// 5 streams; heartbeats; bad input is a JSON error before anything is streamed.
jest.setTimeout(120_000);

const STREAM_ENV = {
  EVENT_STREAM_HEARTBEAT_MS: '200',
  EVENT_STREAM_SETTLE_MS: '500',
  EVENT_STREAM_POLL_MS: '600000',
};

let ctx: TestContext;
let server: Server;
let baseUrl: string;
const open: SseClient[] = [];

beforeAll(async () => {
  ctx = await createTestContext(STREAM_ENV);
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await ctx?.close();
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

const started = (tenantId: string, receptionistId: string, n: number) => ({
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

/** Opens a stream (remembered, closed after the test). */
async function stream(
  auth: string,
  query = '',
  headers: Record<string, string> = {},
  base = baseUrl,
): Promise<SseClient> {
  const c = await openSse(base, `/api/v1/events/stream${query}`, {
    Authorization: auth,
    Accept: 'text/event-stream',
    ...headers,
  });
  open.push(c);
  return c;
}

const ids = (c: SseClient): string[] => c.messages.map((m) => m.id as string);
const emitted = (n: number, tenantId: string) =>
  Array.from({ length: n }, (_, i) => emit(ctx.deps.knex, usage(tenantId, i)));

/** Emits one more event and waits for it: every event written before it was sent first. */
async function marker(c: SseClient, tenantId: string): Promise<string> {
  const id = await emit(ctx.deps.knex, usage(tenantId, 999));
  await waitFor(`the marker ${id} on the stream`, () => ids(c).includes(id));
  return id;
}

describe('live', () => {
  it('sends each new event as id, type and the webhook envelope, in order', async () => {
    const t = await ctx.tenant(['read']);
    const rcp = await addReceptionist(ctx, t.tenantId);
    const c = await stream(t.auth);
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(c.headers['cache-control']).toContain('no-cache');
    const first = await emit(ctx.deps.knex, started(t.tenantId, rcp, 1));
    // Sent, the stream is idle (its poll is 10 minutes away): what follows arrives because
    // the statement that writes it notifies the stream's process.
    await c.waitForMessages(1);
    const pair = await ctx.deps.knex.transaction((trx) =>
      emitMany(trx, [usage(t.tenantId, 1), usage(t.tenantId, 2)]),
    );
    const got = await c.waitForMessages(3);
    expect(got.map((m) => m.id)).toEqual([first, ...[...pair].sort()]);
    for (const m of got) {
      const stored = (await ctx.deps.stores.events.get(m.id as string)) as StoredEvent;
      expect(m.event).toBe(stored.type);
      // The very bytes a webhook of it carries.
      expect(m.data).toBe(JSON.stringify(buildEnvelope(stored)));
    }
    expect(c.text.startsWith('retry: 2000\n\n')).toBe(true);
  });

  it('sends heartbeats (`: ping`) at the configured interval', async () => {
    const t = await ctx.tenant(['read']);
    const c = await stream(t.auth);
    await waitFor('two heartbeats', () => (c.text.match(/^: ping$/gm) ?? []).length >= 2);
    expect(c.messages).toEqual([]);
  });

  it('holds an event back while an earlier one may still commit, then sends both in order', async () => {
    const t = await ctx.tenant(['read']);
    const c = await stream(t.auth);
    const { knex } = ctx.deps;
    // An event written in a transaction that commits after a later event's.
    let late = '';
    let next = '';
    await knex.transaction(async (trx) => {
      late = await emit(trx, usage(t.tenantId, 1));
      // A later millisecond, so a later id; committed at once, on another connection.
      await waitFor('the next millisecond', () => Date.now() > parseInt(late.slice(4, 16), 16));
      next = await emit(knex, usage(t.tenantId, 2));
      // A stream that did not wait for `late` would send `next` now: it gets the chance,
      // for less than the settle window (500 ms), before `late` commits.
      await waitFor('next on the stream', () => ids(c).includes(next), { timeoutMs: 200 }).catch(
        () => undefined,
      );
    });
    expect(late < next).toBe(true);
    const last = await marker(c, t.tenantId);
    expect(ids(c)).toEqual([late, next, last]);
  });

  it('shows a tenant only its own events, and filters by type and receptionist', async () => {
    const a = await ctx.tenant(['read']);
    const b = await ctx.tenant(['read']);
    const rcpA = await addReceptionist(ctx, a.tenantId);
    const rcpA2 = await addReceptionist(ctx, a.tenantId);
    const ca = await stream(a.auth);
    const cb = await stream(b.auth);
    const calls = await stream(a.auth, '?type=call.started&type=call.missed');
    const one = await stream(a.auth, `?receptionist_id=${rcpA}`);
    const [ua] = await Promise.all(emitted(1, a.tenantId));
    const [ub] = await Promise.all(emitted(1, b.tenantId));
    const ca1 = await emit(ctx.deps.knex, started(a.tenantId, rcpA, 1));
    const ca2 = await emit(ctx.deps.knex, started(a.tenantId, rcpA2, 2));
    const lastA = await marker(ca, a.tenantId);
    const lastB = await marker(cb, b.tenantId);
    const callMarker = await emit(ctx.deps.knex, started(a.tenantId, rcpA, 3));
    await waitFor('the call marker', () => ids(calls).includes(callMarker));
    await waitFor('the receptionist marker', () => ids(one).includes(callMarker));
    expect(ids(ca).slice(0, 4)).toEqual([ua, ca1, ca2, lastA]);
    expect(ids(cb)).toEqual([ub, lastB]);
    expect(ids(calls)).toEqual([ca1, ca2, callMarker]);
    expect(ids(one)).toEqual([ca1, callMarker]);
  });
});

describe('resume', () => {
  it('after Last-Event-ID, sends exactly the events missed while disconnected', async () => {
    const t = await ctx.tenant(['read']);
    const first = await stream(t.auth);
    const before = await Promise.all(emitted(2, t.tenantId));
    await first.waitForMessages(2);
    const lastSeen = ids(first)[1] as string;
    first.close();
    const missed = [];
    for (let i = 0; i < 3; i++) missed.push(await emit(ctx.deps.knex, usage(t.tenantId, 10 + i)));
    const again = await stream(t.auth, '', { 'Last-Event-ID': lastSeen });
    const end = await marker(again, t.tenantId);
    expect(ids(again)).toEqual([...missed, end]);
    expect([...before].sort()).toEqual(ids(first));

    // The same from the query, for clients that cannot set the header; the header wins.
    const byQuery = await stream(t.auth, `?last_event_id=${missed[1]}`);
    await waitFor('the rest', () => ids(byQuery).includes(end));
    expect(ids(byQuery)).toEqual([missed[2], end]);
    const both = await stream(t.auth, `?last_event_id=${missed[0]}`, {
      'Last-Event-ID': missed[2] as string,
    });
    await waitFor('the marker', () => ids(both).includes(end));
    expect(ids(both)).toEqual([end]);
  });

  it('replays from created_from when no id is given', async () => {
    const t = await ctx.tenant(['read']);
    const old = await Promise.all(emitted(2, t.tenantId));
    const from = new Date(Date.now() - 60_000).toISOString();
    const c = await stream(t.auth, `?created_from=${from}`);
    const end = await marker(c, t.tenantId);
    expect(ids(c)).toEqual([...[...old].sort(), end]);
  });

  it('resumes on another API process after the first stopped (SIGTERM ends its streams)', async () => {
    const t = await ctx.tenant(['read']);
    const env = { env: STREAM_ENV };
    const first = await startApiProcess(ctx.config, env);
    let second: Awaited<ReturnType<typeof startApiProcess>> | null = null;
    try {
      const c1 = await stream(t.auth, '', {}, first.baseUrl);
      const seen = await Promise.all(emitted(2, t.tenantId));
      await c1.waitForMessages(2);
      first.signal('SIGTERM');
      // The stream ends (cleanly) and the process exits: nothing held it open.
      expect(await c1.ended).toBe('end');
      expect(await first.exited).toBe(0);

      const missed = [];
      for (let i = 0; i < 3; i++) missed.push(await emit(ctx.deps.knex, usage(t.tenantId, i)));
      second = await startApiProcess(ctx.config, env);
      const c2 = await stream(
        t.auth,
        '',
        { 'Last-Event-ID': ids(c1)[1] as string },
        second.baseUrl,
      );
      const end = await marker(c2, t.tenantId);
      expect(ids(c1)).toEqual([...seen].sort());
      expect(ids(c2)).toEqual([...missed, end]);
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});

describe('limits and refusals', () => {
  it('allows 5 streams per key (429 for a 6th), counted until each client leaves', async () => {
    const t = await ctx.tenant(['read']);
    const five = [];
    for (let i = 0; i < 5; i++) five.push(await stream(t.auth));
    expect(five.map((c) => c.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = await stream(t.auth);
    expect(sixth.status).toBe(429);
    expect(sixth.headers['content-type']).toMatch(/^application\/json/);
    expect(sixth.headers['retry-after']).toBe('5');
    expect(sixth.body).toMatchObject({
      error: { type: 'rate_limit_error', code: 'rate_limited' },
    });
    // Another key of the tenant has its own 5.
    const other = await ctx.keyFor(t.tenantId, ['read']);
    expect((await stream(other.auth)).status).toBe(200);
    // A client that leaves gives its place back.
    five[0]!.close();
    await waitFor('the place given back', async () => {
      const c = await stream(t.auth);
      return c.status === 200 ? c : undefined;
    });
  });

  it('answers a HEAD with the headers at once, holding no stream', async () => {
    const t = await ctx.tenant(['read']);
    const res = await request(ctx.app)
      .head('/api/v1/events/stream')
      .set('Authorization', t.auth)
      .timeout(10_000);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(await ctx.deps.knex('event_streams').where({ tenant_id: t.tenantId })).toEqual([]);
  });

  it.each([
    ['?type=Bad', {}, 'invalid_parameter', 'type.0'],
    ['?created_from=tomorrow', {}, 'invalid_parameter', 'created_from'],
    ['?last_event_id=nope', {}, 'invalid_parameter', 'last_event_id'],
    ['', { 'Last-Event-ID': 'not an id' }, 'invalid_parameter', 'Last-Event-ID'],
    ['?receptionist_id=rcp_', {}, 'invalid_parameter', 'receptionist_id'],
  ])('refuses %s %j with a JSON 400', async (query, headers, code, param) => {
    const t = await ctx.tenant(['read']);
    const c = await stream(t.auth, query, headers);
    expect(c.status).toBe(400);
    expect(c.headers['content-type']).toMatch(/^application\/json/);
    expect(c.body).toMatchObject({ error: { code, param } });
  });

  it("answers 404 for another tenant's, an unknown or an expired Last-Event-ID or receptionist", async () => {
    const a = await ctx.tenant(['read']);
    const b = await ctx.tenant(['read']);
    const rcpB = await addReceptionist(ctx, b.tenantId);
    const theirs = await emit(ctx.deps.knex, usage(b.tenantId, 1));
    const foreign = await stream(a.auth, '', { 'Last-Event-ID': theirs });
    const unknown = await stream(a.auth, '', {
      'Last-Event-ID': newTimeOrderedId('evt', new Date()),
    });
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect((foreign.body as { error: object }).error).toEqual(
      (unknown.body as { error: object }).error,
    );
    expect(foreign.body).toMatchObject({
      error: { code: 'resource_not_found', param: 'Last-Event-ID' },
    });
    const receptionist = await stream(a.auth, `?receptionist_id=${rcpB}`);
    expect(receptionist.status).toBe(404);
    const old = newTimeOrderedId('evt', new Date(Date.now() - 40 * 86_400_000));
    const expired = await stream(a.auth, `?last_event_id=${old}`);
    expect(expired.status).toBe(404);
    expect(expired.body).toMatchObject({
      error: { message: expect.stringContaining('older than'), param: 'last_event_id' },
    });
  });

  it('ends once created_to has passed, and answers 204 when nothing is left', async () => {
    const t = await ctx.tenant(['read']);
    const events = await Promise.all(emitted(2, t.tenantId));
    const to = new Date(Date.now() + 10).toISOString();
    const from = new Date(Date.now() - 60_000).toISOString();
    const c = await stream(t.auth, `?created_from=${from}&created_to=${to}`);
    expect(await c.ended).toBe('end');
    expect(ids(c)).toEqual([...events].sort());
    const after = await stream(t.auth, `?created_to=${to}`, { 'Last-Event-ID': ids(c)[1]! });
    expect(after.status).toBe(204);
  });
});
