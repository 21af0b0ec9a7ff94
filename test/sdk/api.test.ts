import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Switchboard, SwitchboardError, type Call } from '@switchboard/sdk';
import { createTestContext, type TestContext } from '../support/context';
import { insertCalls } from '../support/fixtures';
import { responseChecker } from '../support/openapi-responses';
import { addReceptionist } from '../support/receptionist';

// The SDK against the real API (createApi on an ephemeral port, real Postgres and Redis):
// every method but the delivery log (test/sdk/webhooks.test.ts, which needs the worker),
// pagination over 250 calls, and typed errors. Every response the SDK receives is checked
// against the served OpenAPI document, so the document, the SDK and the API agree.
let ctx: TestContext;
let server: Server;
let baseUrl: string;
let check: ReturnType<typeof responseChecker>;
let admin: { tenantId: string; key: string };
let rcp: string;
let quiet: string;
const seen: Array<{ method: string; path: string; status: number; body: unknown }> = [];
let templates: Array<{ path: string; methods: string[]; pattern: RegExp }>;

/** A fetch that remembers every JSON answer, for the document check in afterAll. */
const recordingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const url = new URL(String(input));
  const path = url.pathname.replace(/^\/api\/v1/, '');
  const text = await res.clone().text();
  if (text)
    seen.push({
      method: (init?.method ?? 'GET').toLowerCase(),
      path,
      status: res.status,
      body: JSON.parse(text),
    });
  return res;
};
const client = (key = admin.key) =>
  new Switchboard({ apiKey: key, baseUrl, fetch: recordingFetch, retry: { maxRetries: 0 } });

beforeAll(async () => {
  ctx = await createTestContext();
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const doc = (await request(ctx.app).get('/api/v1/openapi.json')).body;
  check = responseChecker(doc);
  templates = Object.entries(doc.paths as Record<string, object>).map(([path, item]) => ({
    path,
    methods: Object.keys(item),
    pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  admin = await ctx.tenant(['admin']);
  rcp = await addReceptionist(ctx, admin.tenantId, { phoneNumber: '+14155550199' });
  quiet = await addReceptionist(ctx, admin.tenantId, { name: 'Quiet' });
  const start = Date.parse('2026-11-20T12:00:00.000Z');
  // 250 calls, some sharing a started_at to the millisecond: only the id breaks those ties.
  await insertCalls(ctx.deps.knex, admin.tenantId, rcp, 250, (i) => ({
    startedAt: new Date(start - Math.floor(i / 3) * 60_000),
    direction: i % 2 ? 'outbound' : 'inbound',
  }));
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await ctx?.close();
});

/** Newest first by (started_at, id), straight from SQL. */
const expectedIds = async (where: Record<string, string> = {}) =>
  (
    await ctx.deps
      .knex('calls')
      .where({ tenant_id: admin.tenantId, ...where })
      .orderBy([
        { column: 'started_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
  ).map((r: { id: string }) => r.id);

describe('calls', () => {
  it('list() iterates all 250 calls across pages, newest first, none twice', async () => {
    const ids: string[] = [];
    for await (const call of client().calls.list({ limit: 100 })) ids.push(call.id);
    expect(ids).toEqual(await expectedIds());
    expect(ids).toHaveLength(250);
    expect(new Set(ids).size).toBe(250);
  });

  it('list() applies filters on every page, and pages() shows the page size', async () => {
    const pages: Call[][] = [];
    for await (const page of client().calls.list({ direction: 'outbound', limit: 40 }).pages()) {
      pages.push(page);
    }
    expect(pages.map((p) => p.length)).toEqual([40, 40, 40, 5]);
    expect(pages.flat().map((c) => c.id)).toEqual(await expectedIds({ direction: 'outbound' }));
  });

  it('get() returns the detail; a missing call is a typed 404', async () => {
    const [first] = await expectedIds();
    const call = await client().calls.get(first as string);
    expect(call).toMatchObject({ id: first, receptionist_id: rcp, metadata: {} });
    const error = await client()
      .calls.get('call_doesnotexist')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SwitchboardError);
    expect(error).toMatchObject({
      status: 404,
      type: 'invalid_request_error',
      code: 'resource_not_found',
      request_id: expect.stringMatching(/^req_/),
    });
  });

  it('startOutbound() queues a call; the same key and body give the same call', async () => {
    const body = { receptionist_id: rcp, to: '+14155550123', customer_name: 'Dana Whitfield' };
    const first = await client().calls.startOutbound(body, { idempotencyKey: 'sdk-test-1' });
    expect(first).toMatchObject({ status: 'queued', direction: 'outbound', to: '+14155550123' });
    const again = await client().calls.startOutbound(body, { idempotencyKey: 'sdk-test-1' });
    expect(again.id).toBe(first.id);
    const generated = await client().calls.startOutbound(body);
    expect(generated.id).not.toBe(first.id);
    const reused = await client()
      .calls.startOutbound({ ...body, to: '+14155550124' }, { idempotencyKey: 'sdk-test-1' })
      .catch((e: unknown) => e);
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  });
});

describe('receptionists', () => {
  it('list(), get() and listCalls()', async () => {
    const all = await client().receptionists.list({ limit: 1 }).toArray();
    expect(all.map((r) => r.id).sort()).toEqual([quiet, rcp].sort());
    await expect(client().receptionists.get(rcp)).resolves.toMatchObject({ name: 'Front Desk' });
    const calls = await client().receptionists.listCalls(rcp, { limit: 100 }).toArray();
    expect(calls.map((c) => c.id)).toEqual(await expectedIds({ receptionist_id: rcp }));
    expect(await client().receptionists.listCalls(quiet).toArray()).toEqual([]);
  });

  it('update() changes the name; a read key gets a typed 403', async () => {
    const updated = await client().receptionists.update(quiet, { greeting: 'Hello there' });
    expect(updated).toMatchObject({ id: quiet, greeting: 'Hello there' });
    const { key } = await ctx
      .keyFor(admin.tenantId, ['read'])
      .then(({ auth }) => ({ key: auth.slice(7) }));
    const error = await client(key)
      .receptionists.update(quiet, { name: 'x' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 403,
      type: 'permission_error',
      code: 'insufficient_scope',
    });
  });

  it('a bad key is a typed 401', async () => {
    const error = await client('sk_live_nope0000000000')
      .receptionists.get(rcp)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 401,
      type: 'authentication_error',
      code: 'invalid_api_key',
    });
  });
});

describe('webhooks', () => {
  it('create(), list(), get(), test(), enable() and delete()', async () => {
    const sb = client();
    const created = await sb.webhooks.create({
      url: 'https://127.0.0.1:9/hook',
      events: ['call.completed'],
    });
    expect(created.signing_secret).toMatch(/^whsec_/);
    const listed = await sb.webhooks.list().toArray();
    expect(listed.map((w) => w.id)).toEqual([created.id]);
    await expect(sb.webhooks.get(created.id)).resolves.not.toHaveProperty('signing_secret');
    const test = await sb.webhooks.test(created.id);
    expect(test).toMatchObject({
      delivered: false,
      status_code: null,
      payload: { type: 'webhook.test' },
    });
    await expect(sb.webhooks.enable(created.id)).resolves.toMatchObject({ is_active: true });
    await expect(sb.webhooks.delete(created.id)).resolves.toBeUndefined();
    await expect(sb.webhooks.get(created.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('the OpenAPI document', () => {
  it('describes every answer the SDK received here', () => {
    expect(seen.length).toBeGreaterThan(20);
    const statuses = new Set(seen.map((s) => s.status));
    expect([...statuses].sort()).toEqual(
      expect.arrayContaining([200, 201, 202, 401, 403, 404, 422]),
    );
    for (const { method, path, status, body } of seen) {
      const template = templates.find(
        (t) => t.methods.includes(method) && t.pattern.test(path),
      )?.path;
      expect([method, path, template]).toEqual([method, path, expect.any(String)]);
      check(method, template as string, status, body);
    }
  });
});
