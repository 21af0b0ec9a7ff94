import { createReadStream } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { Switchboard, SwitchboardError } from '@switchboard/sdk';
import { createTestContext, type TestContext } from '../support/context';
import { messages } from '../support/fixtures';
import { responseChecker } from '../support/openapi-responses';
import { startTestWorker, waitFor, type TestWorker } from '../support/worker';
import { addReceptionist } from '../support/receptionist';

// The SDK's receptionists (create, provision), usage, sms and leads groups against the real
// API on an ephemeral port, with the real worker (simulators at speed 100) doing the
// provisioning, sending and importing; every answer is checked against the served OpenAPI
// document at the end, as in test/sdk/api.test.ts.
jest.setTimeout(120_000);
const RCP_PHONE = '+14155550100';
const SAMPLE = path.resolve(__dirname, '../../docs/examples/leads.csv');

let ctx: TestContext;
let worker: TestWorker;
let server: Server;
let baseUrl: string;
let check: ReturnType<typeof responseChecker>;
let templates: Array<{ path: string; methods: string[]; pattern: RegExp }>;
let tenant: { tenantId: string; key: string };
let rcp: string;
const seen: Array<{ method: string; path: string; status: number; body: unknown }> = [];

/** A fetch that remembers every JSON answer, for the document check at the end. */
const recordingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const text = await res.clone().text();
  if (text)
    seen.push({
      method: (init?.method ?? 'GET').toLowerCase(),
      path: new URL(String(input)).pathname.replace(/^\/api\/v1/, ''),
      status: res.status,
      body: JSON.parse(text),
    });
  return res;
};
const client = (key = tenant.key) =>
  new Switchboard({ apiKey: key, baseUrl, fetch: recordingFetch, retry: { maxRetries: 0 } });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => {
      expect(e).toBeInstanceOf(SwitchboardError);
      return e as SwitchboardError;
    },
  );
/** Waits (bounded) until `read` answers something that `done` accepts. */
const until = <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean) =>
  waitFor(what, async () => {
    const value = await read();
    return done(value) ? value : undefined;
  });

beforeAll(async () => {
  ctx = await createTestContext({ SIMULATOR_SPEED: '100' });
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const doc = (await request(ctx.app).get('/api/v1/openapi.json')).body;
  check = responseChecker(doc);
  templates = Object.entries(doc.paths as Record<string, object>).map(([p, item]) => ({
    path: p,
    methods: Object.keys(item),
    pattern: new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  tenant = await ctx.tenant(['write']);
  rcp = await addReceptionist(ctx, tenant.tenantId, { phoneNumber: RCP_PHONE });
  worker = await startTestWorker(ctx);
});
afterAll(async () => {
  await worker?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await ctx?.close();
});

describe('receptionists', () => {
  it('create() is accepted, replayed under its key, and becomes ready', async () => {
    const body = { name: 'Reception', area_code: '415', plan: 'pro' as const };
    const created = await client().receptionists.create(body, { idempotencyKey: 'desk-1' });
    expect(created).toMatchObject({ status: 'provisioning', plan: 'pro', phone_number: null });
    const again = await client().receptionists.create(body, { idempotencyKey: 'desk-1' });
    expect(again.id).toBe(created.id);
    const ready = await until(
      'the receptionist to be ready',
      () => client().receptionists.get(created.id),
      (r) => r.status === 'ready',
    );
    expect(ready).toMatchObject({ error: null, phone_number: expect.stringMatching(/^\+1415/) });
    const refused = await failure(client().receptionists.provision(created.id));
    expect(refused).toMatchObject({ status: 409, code: 'invalid_state' });
  });

  it('a failed one shows error; provision() starts another round', async () => {
    const created = await client().receptionists.create({ name: 'Nowhere', area_code: '999' });
    const failed = await until(
      'the receptionist to fail',
      () => client().receptionists.get(created.id),
      (r) => r.status === 'error',
    );
    expect(failed.error).toMatchObject({ code: 'number_unavailable' });
    const again = await client().receptionists.provision(created.id);
    expect(again).toMatchObject({ id: created.id, status: 'provisioning', error: null });
    await until(
      'the second round to fail too',
      () => client().receptionists.get(created.id),
      (r) => r.status === 'error',
    );
  });
});

describe('sms and usage', () => {
  it('send() is replayed under its key, sent by the worker, and counted by usage.get()', async () => {
    const body = { receptionist_id: rcp, to: '+14155550141', message: 'See you Tuesday 👋' };
    const queued = await client().sms.send(body, { idempotencyKey: 'reminder-1' });
    expect(queued).toMatchObject({ status: 'queued', from: RCP_PHONE, segments: 1 });
    expect((await client().sms.send(body, { idempotencyKey: 'reminder-1' })).id).toBe(queued.id);
    const sent = await until(
      'the message to be sent',
      () => client().sms.get(queued.id),
      (m) => m.status === 'sent' || m.status === 'delivered',
    );
    const usage = await client().usage.get({ period: (sent.sent_at as string).slice(0, 7) });
    expect(usage).toMatchObject({ sms_sent: 1, sms_received: 0, minutes_used: 0 });
    expect(await client().usage.get({ period: '2020-01' })).toMatchObject({
      billing_period_start: '2020-01-01T00:00:00.000Z',
      billing_period_end: '2020-02-01T00:00:00.000Z',
      sms_sent: 0,
    });
    const bad = await failure(client().usage.get({ period: '2020-13' }));
    expect(bad).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'period' });
  });

  it('listForReceptionist() pages both directions; a recipient who said STOP is a 422', async () => {
    const ingest = (message: string) =>
      request(ctx.app)
        .post('/internal/v1/telephony/events')
        .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
        .send(messages.smsInbound(rcp, RCP_PHONE, message, { from: '+14155550142' }));
    expect((await ingest('STOP')).status).toBe(202);
    const refused = await failure(
      client().sms.send({ receptionist_id: rcp, to: '+14155550142', message: 'One more thing' }),
    );
    expect(refused).toMatchObject({ status: 422, code: 'recipient_opted_out', param: 'to' });

    const all = await client().sms.listForReceptionist(rcp, { limit: 1 }).toArray();
    // Newest first: the STOP confirmation, the STOP, the message sent above.
    expect(all.map((m) => m.direction)).toEqual(['outbound', 'inbound', 'outbound']);
    expect(all[0]?.to).toBe('+14155550142');
    const optOuts = await client().sms.listOptOuts({ phone: '+14155550142' }).toArray();
    expect(optOuts).toEqual([
      { phone: '+14155550142', keyword: 'STOP', opted_out_at: expect.any(String) },
    ]);
    const inbound = await client().sms.listForReceptionist(rcp, { direction: 'inbound' }).toArray();
    expect(inbound.map((m) => [m.message, m.status])).toEqual([['STOP', 'received']]);
    const missing = await failure(client().sms.listForReceptionist('rcp_nope').toArray());
    expect(missing).toMatchObject({ status: 404, code: 'resource_not_found' });
  });
});

describe('leads', () => {
  it('create(), get(), update(); lead_exists names the lead that has the phone', async () => {
    const body = { name: 'Dana Whitfield', phone: '+14155550123', tags: ['boiler'] };
    const lead = await client().leads.create(body, { idempotencyKey: 'lead-dana-1' });
    expect(lead).toMatchObject({ source: 'api', status: 'new', tags: ['boiler'] });
    expect((await client().leads.create(body, { idempotencyKey: 'lead-dana-1' })).id).toBe(lead.id);
    const taken = await failure(client().leads.create({ phone: '+14155550123' }));
    expect(taken).toMatchObject({ status: 409, code: 'lead_exists' });
    expect(taken.message).toContain(lead.id);
    await expect(client().leads.get(lead.id)).resolves.toEqual(lead);
    const updated = await client().leads.update(lead.id, { status: 'contacted', notes: 'Tue' });
    expect(updated).toMatchObject({ id: lead.id, status: 'contacted', notes: 'Tue' });
  });

  it('search() follows cursors over the matches, newest first', async () => {
    const ids: string[] = [];
    for (const [i, name] of ['Ada Ng', 'Bo Ng', 'Cy Ng'].entries()) {
      ids.push((await client().leads.create({ name, email: `ng${i}@example.com` })).id);
    }
    const found = await client().leads.search({ q: ' ng', limit: 1 }).toArray();
    expect(found.map((l) => l.id)).toEqual(ids.reverse());
    const pages = [];
    for await (const page of client().leads.search({ q: 'NG', limit: 2 }).pages()) {
      pages.push(page.length);
    }
    expect(pages).toEqual([2, 1]);
  });

  it('import() takes text, bytes or a stream, replays under its key; getImport() shows progress', async () => {
    const csv = 'name,phone,email\r\nIvy Stone,+14155550150,\r\nNo Contact,,\r\n';
    const imp = await client().leads.import(csv, { idempotencyKey: 'file-1' });
    expect(imp).toMatchObject({ status: 'processing', total_rows: 2, processed_rows: 0 });
    const replay = await client().leads.import(Buffer.from(csv), { idempotencyKey: 'file-1' });
    expect(replay.id).toBe(imp.id);
    const reused = await failure(
      client().leads.import(`${csv}x,,\r\n`, { idempotencyKey: 'file-1' }),
    );
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    const done = await until(
      'the import to complete',
      () => client().leads.getImport(imp.id),
      (i) => i.status === 'completed',
    );
    expect(done).toMatchObject({ processed_rows: 2, created: 1, skipped: 1 });
    expect(done.errors).toEqual([{ row: 2, field: 'phone', message: expect.any(String) }]);

    // The shipped sample (BOM, CRLF, quoted newlines, bad and duplicate rows), streamed from
    // disk, into a tenant of its own so its counts are those of docs/api-guide.md.
    const other = await ctx.tenant(['write']);
    const sample = await client(other.key).leads.import(createReadStream(SAMPLE));
    const imported = await until(
      'the sample to be imported',
      () => client(other.key).leads.getImport(sample.id),
      (i) => i.status === 'completed',
    );
    expect(imported).toMatchObject({
      total_rows: 12,
      processed_rows: 12,
      created: 5,
      updated: 0,
      skipped: 5,
      duplicates: 2,
    });
    const empty = await failure(client().leads.import(''));
    expect(empty).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'body' });
  });
});

describe('the OpenAPI document', () => {
  it('describes every answer the SDK received here', () => {
    expect(seen.length).toBeGreaterThan(20);
    expect([...new Set(seen.map((s) => s.status))].sort()).toEqual(
      expect.arrayContaining([200, 201, 202, 400, 404, 409, 422]),
    );
    for (const { method, path: p, status, body } of seen) {
      const template = templates.find((t) => t.methods.includes(method) && t.pattern.test(p));
      expect([method, p, template?.path]).toEqual([method, p, expect.any(String)]);
      check(method, template?.path as string, status, body);
    }
  });
});
