import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Switchboard, SwitchboardError } from '@switchboard/sdk';
import { emit, emitMany } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/wait';
import { responseChecker } from '../support/openapi-responses';
import { addReceptionist } from '../support/receptionist';

// The SDK's events group against the real API on an ephemeral port: `list` follows cursors
// to the end and sends a `type` array as the repeated parameter, `get` reads one event; each
// answer is checked against the served OpenAPI document (the `Event` union of envelopes).
// `stream` yields events live and, when its connection is cut, reconnects after the last
// event it yielded: none missed, none twice.
let ctx: TestContext;
let server: Server;
let baseUrl: string;
let check: ReturnType<typeof responseChecker>;
let tenant: { tenantId: string; key: string };
let rcp: string;

const seen: Array<{ path: string; status: number; body: unknown }> = [];
const recordingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  if ((res.headers.get('content-type') ?? '').startsWith('application/json')) {
    const path = new URL(String(input)).pathname.replace(/^\/api\/v1/, '');
    seen.push({ path, status: res.status, body: await res.clone().json() });
  }
  return res;
};
const client = (key = tenant.key) =>
  new Switchboard({
    apiKey: key,
    baseUrl,
    fetch: recordingFetch,
    retry: { maxRetries: 0 },
  });

beforeAll(async () => {
  ctx = await createTestContext({
    EVENT_STREAM_HEARTBEAT_MS: '200',
    EVENT_STREAM_SETTLE_MS: '300',
  });
  tenant = await ctx.tenant(['read']);
  rcp = await addReceptionist(ctx, tenant.tenantId);
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  check = responseChecker((await request(ctx.app).get('/api/v1/openapi.json')).body as object);
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await ctx?.close();
});

const started = (n: number) => ({
  tenantId: tenant.tenantId,
  receptionistId: rcp,
  type: 'call.started' as const,
  data: {
    call_id: `call_${n}`,
    direction: 'outbound' as const,
    from: '+14155550100',
    to: '+14155550101',
    started_at: '2026-11-21T10:15:00.000Z',
  },
});

it('lists every event across pages, filters by types, and gets one', async () => {
  const { knex } = ctx.deps;
  const calls = await knex.transaction((trx) =>
    emitMany(
      trx,
      Array.from({ length: 5 }, (_, i) => started(i)),
    ),
  );
  const usage = await emit(knex, {
    tenantId: tenant.tenantId,
    type: 'usage.threshold',
    data: {
      threshold: 80,
      minutes_used: 80,
      minutes_included: 100,
      billing_period_end: '2026-12-01T00:00:00.000Z',
    },
  });
  const sb = client();

  const all = await sb.events.list({ limit: 2 }).toArray();
  expect(all.map((e) => e.id)).toEqual([usage, ...[...calls].sort().reverse()]);
  expect(seen.filter((s) => s.path === '/events')).toHaveLength(3);

  const both = await sb.events.list({ type: ['usage.threshold', 'call.started'] }).toArray();
  expect(both).toHaveLength(6);
  const onlyUsage = await sb.events.list({ type: ['usage.threshold'] }).toArray();
  expect(onlyUsage.map((e) => e.id)).toEqual([usage]);

  const one = await sb.events.get(calls[0]!);
  expect(one).toMatchObject({ id: calls[0], event: 'call.started', receptionist_id: rcp });
  if (one.event === 'call.started') expect(one.data.direction).toBe('outbound');

  const missing = await sb.events.get('evt_unknown').then(
    () => null,
    (e: unknown) => e,
  );
  expect(missing).toBeInstanceOf(SwitchboardError);
  expect(missing).toMatchObject({ status: 404, code: 'resource_not_found' });

  for (const s of seen) {
    check('get', s.path === '/events' ? '/events' : '/events/{id}', s.status, s.body);
  }
});

it('streams events live and resumes by itself after its connection is cut', async () => {
  const own = await ctx.tenant(['read']);
  const sb = client(own.key);
  const usage = (minutes: number) =>
    emit(ctx.deps.knex, {
      tenantId: own.tenantId,
      type: 'usage.threshold',
      data: {
        threshold: 80,
        minutes_used: minutes,
        minutes_included: 100,
        billing_period_end: '2026-12-01T00:00:00.000Z',
      },
    });
  const got: string[] = [];
  const stop = new AbortController();
  const reading = (async () => {
    for await (const e of sb.events.stream(
      { type: ['usage.threshold'] },
      { signal: stop.signal },
    )) {
      got.push(e.id);
      if (e.event === 'usage.threshold') expect(e.data.minutes_included).toBe(100);
    }
  })();
  // The stream is open once the server holds its lease.
  await waitFor('the stream open', async () =>
    (await ctx.deps.knex('event_streams').where({ tenant_id: own.tenantId }).first())
      ? true
      : undefined,
  );
  const before = [await usage(1), await usage(2)];
  await waitFor('the first two events', () => got.length >= 2);
  // Cut every open connection of the server: the client reconnects after the last event.
  server.closeAllConnections();
  const after = [await usage(3), await usage(4)];
  await waitFor('the events written while it was cut', () => got.length >= 4);
  const last = await usage(5);
  await waitFor('the last event', () => got.includes(last));
  expect(got).toEqual([...before, ...after, last]);
  stop.abort();
  await reading;

  // Started after an event kept from before: the ones after it, and it stops on `break`.
  const resumed: string[] = [];
  for await (const e of sb.events.stream({}, { lastEventId: before[1] })) {
    resumed.push(e.id);
    if (resumed.length === 3) break;
  }
  expect(resumed).toEqual([...after, last]);
  await waitFor('the stream closed', async () =>
    (await ctx.deps.knex('event_streams').where({ tenant_id: own.tenantId }).first())
      ? undefined
      : true,
  );
});
