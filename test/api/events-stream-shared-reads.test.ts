import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { emit } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';
import { listenToStreamNotifications } from '../support/stream-notifications';
import { openSse, type SseClient } from '../support/sse';
import { emitUsageEvents } from '../support/subscribed-events';
import { waitFor } from '../support/wait';

// Many streams of one tenant on one API process cost one read of Postgres per notification,
// not one per stream (docs/decisions/0118-one-read-per-tenant-for-event-streams.md): a
// stream reads on its own only to catch up when it opens, then takes its events from its
// tenant's shared read, filtered in memory. Counted by switchboard_event_stream_reads_total;
// the notifications by a LISTEN of the test's own on the streams' channel.
jest.setTimeout(120_000);

const STREAMS = 20;
const TRANSACTIONS = 5;
const EVENTS_EACH = 4;

let ctx: TestContext;
let server: Server;
let baseUrl: string;
let notifications: Awaited<ReturnType<typeof listenToStreamNotifications>>;
let heard: string[] = [];
const open: SseClient[] = [];

beforeAll(async () => {
  ctx = await createTestContext({
    EVENT_STREAM_HEARTBEAT_MS: '200',
    EVENT_STREAM_SETTLE_MS: '300',
    // Idle feeds never read on their own here: every read is a notification's.
    EVENT_STREAM_POLL_MS: '600000',
  });
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  notifications = await listenToStreamNotifications(ctx.config.databaseUrl);
  heard = notifications.heard;
});
afterAll(async () => {
  for (const c of open.splice(0)) c.close();
  await notifications?.end();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await ctx?.close();
});

async function stream(auth: string): Promise<SseClient> {
  const c = await openSse(baseUrl, '/api/v1/events/stream', {
    Authorization: auth,
    Accept: 'text/event-stream',
  });
  open.push(c);
  return c;
}

const ids = (c: SseClient): string[] => c.messages.map((m) => m.id as string);

/** The process's reads of the event log for streams so far. */
async function reads(): Promise<{ shared: number; catchUp: number }> {
  const { values } = await ctx.deps.metrics.eventStreamReads.get();
  const of = (read: string) => values.find((v) => v.labels.read === read)?.value ?? 0;
  return { shared: of('shared'), catchUp: of('catch_up') };
}

const usage = (tenantId: string, livemode = true) => ({
  tenantId,
  type: 'usage.threshold' as const,
  data: {
    threshold: 80 as const,
    minutes_used: 1,
    minutes_included: 100,
    billing_period_end: '2026-12-01T00:00:00.000Z',
  },
  livemode,
});

it(`reads once per notification for ${STREAMS} streams of a tenant, each getting every event once, in order`, async () => {
  const t = await ctx.tenant(['read']);
  // Five streams per key at most: four keys.
  const keys = [t.auth];
  for (let i = 0; i < 3; i++) keys.push((await ctx.keyFor(t.tenantId, ['read'])).auth);
  const start = await reads();
  const streams: SseClient[] = [];
  for (let i = 0; i < STREAMS; i++) streams.push(await stream(keys[i % keys.length] as string));
  expect(streams.map((c) => c.status)).toEqual(Array(STREAMS).fill(200));
  const first = await emit(ctx.deps.knex, usage(t.tenantId));
  await waitFor('the first event on every stream', () =>
    streams.every((c) => ids(c).includes(first)),
  );
  const opened = await reads();
  // Each read on its own to catch up (again when the shared read had moved on meanwhile).
  expect(opened.catchUp - start.catchUp).toBeGreaterThanOrEqual(STREAMS);
  expect(opened.catchUp - start.catchUp).toBeLessThanOrEqual(2 * STREAMS);

  const fromHeard = heard.length;
  const sent: string[] = [];
  for (let i = 0; i < TRANSACTIONS; i++) {
    sent.push(...(await emitUsageEvents(ctx.deps.knex, t.tenantId, EVENTS_EACH)));
  }
  const last = await emit(ctx.deps.knex, usage(t.tenantId));
  await waitFor('the last event on every stream', () =>
    streams.every((c) => ids(c).includes(last)),
  );
  // One notification per transaction; they arrive in commit order, the last one's last.
  await waitFor('the last notification', () => heard.length >= fromHeard + TRANSACTIONS + 1);
  const notified = heard.slice(fromHeard).filter((tenant) => tenant === t.tenantId).length;
  expect(notified).toBe(TRANSACTIONS + 1);
  const done = await reads();
  expect(done.catchUp).toBe(opened.catchUp);
  expect(done.shared - opened.shared).toBeGreaterThanOrEqual(1);
  expect(done.shared - opened.shared).toBeLessThanOrEqual(notified);

  // Order by (created_at, id) is the ids' order: each id begins with its event's time.
  const expected = [first, ...[...sent].sort(), last];
  for (const c of streams) expect(ids(c)).toEqual(expected);
});

it('keeps modes and tenants apart in the shared reads', async () => {
  const a = await ctx.tenant(['read']);
  const b = await ctx.tenant(['read']);
  const aTest = await ctx.deps.stores.apiKeys.create({
    tenantId: a.tenantId,
    scopes: ['read'],
    livemode: false,
  });
  const live = await stream(a.auth);
  const test = await stream(`Bearer ${aTest.key}`);
  const other = await stream(b.auth);
  const liveEvent = await emit(ctx.deps.knex, usage(a.tenantId));
  const testEvent = await emit(ctx.deps.knex, usage(a.tenantId, false));
  const otherEvent = await emit(ctx.deps.knex, usage(b.tenantId));
  const liveLast = await emit(ctx.deps.knex, usage(a.tenantId));
  const testLast = await emit(ctx.deps.knex, usage(a.tenantId, false));
  await waitFor('the last events', () =>
    [
      ids(live).includes(liveLast),
      ids(test).includes(testLast),
      ids(other).includes(otherEvent),
    ].every(Boolean),
  );
  expect(ids(live)).toEqual([liveEvent, liveLast]);
  expect(ids(test)).toEqual([testEvent, testLast]);
  expect(ids(other)).toEqual([otherEvent]);
  for (const m of test.messages) expect(JSON.parse(m.data)).toMatchObject({ livemode: false });
});
