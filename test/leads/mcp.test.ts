import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createTestContext, type TestContext } from '../support/context';
import { insertCalls } from '../support/fixtures';
import { addReceptionist } from '../support/receptionist';

// POST /api/v1/mcp over real HTTP on an ephemeral port, driven by the SDK's own client.
let ctx: TestContext;
let server: Server;
let base: string;
let tenantId: string;
let writeKey: string;
let readKey: string;

beforeAll(async () => {
  ctx = await createTestContext();
  server = ctx.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t = await ctx.tenant(['write']);
  tenantId = t.tenantId;
  writeKey = t.key;
  readKey = (await ctx.keyFor(tenantId, ['read'])).auth.slice('Bearer '.length);
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await ctx.close();
});

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/v1/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const json = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text);

describe('MCP', () => {
  it('lists the four tools with the REST bodies as input schemas', async () => {
    const client = await connect(readKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['create_lead', 'get_call', 'search_leads', 'update_lead'].sort(),
    );
    const create = tools.find((t) => t.name === 'create_lead');
    expect(Object.keys(create?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['name', 'phone', 'email', 'status', 'tags', 'metadata']),
    );
    await client.close();
  });

  it('creates, updates and finds a lead (source mcp) with the same events as REST', async () => {
    const client = await connect(writeKey);
    const created = await call(client, 'create_lead', {
      name: 'Ada Lovelace',
      phone: '+14155550140',
      tags: ['mcp'],
    });
    expect(created.isError).toBeFalsy();
    const lead = json(created);
    expect(lead).toMatchObject({ source: 'mcp', name: 'Ada Lovelace', status: 'new' });
    expect(created.structuredContent).toEqual(lead);
    const updated = json(await call(client, 'update_lead', { id: lead.id, status: 'qualified' }));
    expect(updated.status).toBe('qualified');
    const found = json(await call(client, 'search_leads', { q: 'lovelace' }));
    expect(found.data.map((l: { id: string }) => l.id)).toEqual([lead.id]);
    expect(found).toMatchObject({ has_more: false, cursor: null });
    const viaRest = await request(ctx.app)
      .get(`/api/v1/leads/${lead.id}`)
      .set('Authorization', `Bearer ${writeKey}`);
    expect(viaRest.body).toEqual(updated);
    const events = await ctx.deps.stores.events.listForTenant(tenantId);
    const mine = events.filter((e) => e.data.lead_id === lead.id);
    expect(mine.map((e) => e.type)).toEqual(['lead.created', 'lead.updated']);
    expect(mine[0]?.data.source).toBe('mcp');
    expect(mine[1]?.data.changed_fields).toEqual(['status']);
    await client.close();
  });

  it('returns API errors as tool errors, scope included', async () => {
    const reader = await connect(readKey);
    const denied = await call(reader, 'create_lead', { phone: '+14155550141' });
    expect(denied.isError).toBe(true);
    expect(json(denied).error).toMatchObject({
      code: 'insufficient_scope',
      doc_url: 'docs/API.md#error-insufficient_scope',
    });
    const writer = await connect(writeKey);
    const bad = await call(writer, 'create_lead', { phone: 'call me' });
    expect(json(bad).error).toMatchObject({ code: 'invalid_parameter', param: 'phone' });
    const first = json(await call(writer, 'create_lead', { phone: '+14155550142' }));
    const dup = await call(writer, 'create_lead', { phone: '+14155550142' });
    expect(json(dup).error.code).toBe('lead_exists');
    expect(json(dup).error.message).toContain(first.id);
    const missing = await call(writer, 'update_lead', { id: 'lead_nope', status: 'won' });
    expect(json(missing).error).toMatchObject({ code: 'resource_not_found' });
    const nothing = await call(writer, 'update_lead', { id: first.id });
    expect(json(nothing).error.code).toBe('invalid_parameter');
    const limit = await call(writer, 'search_leads', { limit: 51 });
    expect(json(limit).error).toMatchObject({ code: 'invalid_parameter', param: 'limit' });
    await Promise.all([reader.close(), writer.close()]);
  });

  it('get_call returns a call of the tenant, and not another tenant’s', async () => {
    const rcp = await addReceptionist(ctx, tenantId, { phoneNumber: '+14155550199' });
    const [callId] = await insertCalls(ctx.deps.knex, tenantId, rcp, 1, () => ({
      startedAt: new Date(),
      customerName: 'Grace Hopper',
    }));
    const client = await connect(readKey);
    const got = json(await call(client, 'get_call', { id: callId }));
    expect(got).toMatchObject({ id: callId, customer_name: 'Grace Hopper' });
    const other = await ctx.tenant(['read']);
    const stranger = await connect(other.key);
    const res = await call(stranger, 'get_call', { id: callId });
    expect(json(res).error.code).toBe('resource_not_found');
    await Promise.all([client.close(), stranger.close()]);
  });

  it('answers protocol errors as JSON-RPC errors, never a 500', async () => {
    const post = (body: unknown, accept = 'application/json, text/event-stream') =>
      fetch(`${base}/api/v1/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${readKey}`,
          'content-type': 'application/json',
          accept,
        },
        body: JSON.stringify(body),
      });
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const notAcceptable = await post(list, 'application/json');
    expect(notAcceptable.status).toBe(406);
    const rpcError = async (r: Response) => ((await r.json()) as { error: { code: number } }).error;
    expect(await rpcError(notAcceptable)).toMatchObject({ code: expect.any(Number) });
    const invalid = await post({ jsonrpc: '2.0', id: 2 });
    expect(invalid.status).toBeGreaterThanOrEqual(400);
    expect(invalid.status).toBeLessThan(500);
    // A batch is a list of message objects (the OpenAPI document says so; validation checks it).
    const notMessages = await post([1, 'two']);
    expect(notMessages.status).toBe(400);
    expect(((await notMessages.json()) as { error: { code: string } }).error.code).toBe(
      'invalid_parameter',
    );
    const unknown = await post({ jsonrpc: '2.0', id: 3, method: 'no/such/method' });
    expect(unknown.status).toBe(200);
    expect((await rpcError(unknown)).code).toBe(-32601);
    const get = await fetch(`${base}/api/v1/mcp`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
  });

  // Found by the fuzzer (test/sweeps): a `+json` content type passed the API's JSON parser and
  // no body passed validation, then the transport answered a JSON-RPC 415 that is in no
  // contract. A wrong or missing content type is the contract's 415, as on every route.
  it.each([
    ['application/merge-patch+json', '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'],
    [null, undefined],
  ])('a body sent as %s is a 415 with the contract error body', async (type, body) => {
    const res = await fetch(`${base}/api/v1/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${readKey}`,
        accept: 'application/json, text/event-stream',
        ...(type ? { 'content-type': type } : {}),
      },
      body,
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({
      error: { type: 'invalid_request_error', code: 'unsupported_media_type' },
      request_id: expect.stringMatching(/^req_/),
    });
  });

  it('is authenticated like every route, and documented in the OpenAPI document', async () => {
    const res = await fetch(`${base}/api/v1/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    const doc = await request(ctx.app).get('/api/v1/openapi.json');
    expect(doc.body.paths['/mcp'].post).toBeDefined();
    expect(doc.body.paths['/leads/import'].post.requestBody.content['text/csv']).toBeDefined();
  });
});
