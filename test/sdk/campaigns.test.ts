import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Switchboard, SwitchboardError } from '@switchboard/sdk';
import { responseChecker } from '../support/openapi-responses';
import { createTestContext, type TestContext } from '../support/context';
import { receptionistTenant } from '../support/receptionist';

// The SDK's `campaigns` group against the real API (createApi on an ephemeral port, real
// Postgres and Redis, no worker): create with an idempotency key, list across pages, get,
// cancel, recipients, typed errors. Every answer is checked against the served OpenAPI
// document.
let ctx: TestContext;
let server: Server;
let baseUrl: string;
let check: ReturnType<typeof responseChecker>;
let key: string;
let rcp: string;
const seen: Array<{ method: string; template: string; status: number; body: unknown }> = [];

const templateOf = (path: string): string =>
  path
    .replace(/^\/api\/v1/, '')
    .replace(/\/campaigns\/[^/]+\/cancel$/, '/campaigns/{id}/cancel')
    .replace(/\/campaigns\/[^/]+\/recipients$/, '/campaigns/{id}/recipients')
    .replace(/\/campaigns\/[^/]+$/, '/campaigns/{id}');

const recordingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const text = await res.clone().text();
  seen.push({
    method: (init?.method ?? 'GET').toLowerCase(),
    template: templateOf(new URL(String(input)).pathname),
    status: res.status,
    body: JSON.parse(text),
  });
  return res;
};
const client = () =>
  new Switchboard({ apiKey: key, baseUrl, fetch: recordingFetch, retry: { maxRetries: 0 } });

beforeAll(async () => {
  ctx = await createTestContext();
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  check = responseChecker((await request(ctx.app).get('/api/v1/openapi.json')).body);
  ({ key, rcp } = await receptionistTenant(ctx, {
    scopes: ['write'],
    phoneNumber: '+14155550199',
  }));
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await ctx?.close();
});

const body = (name: string) => ({
  name,
  receptionist_id: rcp,
  message: 'Hi {{name}}, your spring boiler check is due.',
  recipients: { phones: ['+14155550123', '+14155550124'] },
  send_rate_per_minute: 120,
});

it('create() accepts a campaign; the same key and body give the same campaign', async () => {
  const first = await client().campaigns.create(body('Spring'), { idempotencyKey: 'sdk-cmp-1' });
  expect(first).toMatchObject({ status: 'queued', recipients: 2, send_rate_per_minute: 120 });
  const again = await client().campaigns.create(body('Spring'), { idempotencyKey: 'sdk-cmp-1' });
  expect(again.id).toBe(first.id);
  const reused = await client()
    .campaigns.create(body('Autumn'), { idempotencyKey: 'sdk-cmp-1' })
    .catch((e: unknown) => e);
  expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  const none = await client()
    .campaigns.create({ ...body('Empty'), recipients: { phones: [] } })
    .catch((e: unknown) => e);
  expect(none).toBeInstanceOf(SwitchboardError);
  expect(none).toMatchObject({ status: 400, code: 'no_recipients', param: 'recipients' });
});

it('list() follows cursors newest first; get() and cancel(); a second cancel is a 409', async () => {
  const created = [];
  for (const name of ['A', 'B', 'C', 'D', 'E'])
    created.push(await client().campaigns.create(body(name)));
  const listed = await client().campaigns.list({ limit: 2 }).toArray();
  expect(listed.slice(0, 5).map((c) => c.name)).toEqual(['E', 'D', 'C', 'B', 'A']);
  const last = created[4] as { id: string };
  await expect(client().campaigns.get(last.id)).resolves.toMatchObject({ name: 'E' });
  await expect(client().campaigns.cancel(last.id)).resolves.toMatchObject({
    status: 'canceled',
  });
  await expect(client().campaigns.cancel(last.id)).rejects.toMatchObject({
    status: 409,
    code: 'invalid_state',
  });
  // Its recipients, a page at a time, last in sending order first: canceled before their turn.
  const recipients = await client().campaigns.listRecipients(last.id, { limit: 1 }).toArray();
  expect(recipients.map((r) => [r.phone, r.outcome, r.sms_id])).toEqual([
    ['+14155550124', 'canceled', null],
    ['+14155550123', 'canceled', null],
  ]);
  const pending = await client().campaigns.listRecipients(last.id, { outcome: 'pending' });
  expect(await pending.toArray()).toEqual([]);
  await expect(client().campaigns.get('cmp_doesnotexist')).rejects.toMatchObject({
    status: 404,
    code: 'resource_not_found',
  });
});

it('every answer matches the OpenAPI document', () => {
  expect(new Set(seen.map((s) => s.status))).toEqual(new Set([200, 202, 400, 404, 409, 422]));
  for (const { method, template, status, body: answer } of seen)
    check(method, template, status, answer);
});
