import { Readable } from 'node:stream';
import {
  etagOf,
  MAX_LEAD_IMPORT_BYTES,
  Switchboard,
  SwitchboardConnectionError,
  SwitchboardError,
} from './index';
import { backoffMs, DEFAULT_RETRY, retryAfterMs } from './retry';
import { scriptedServer, type ScriptedServer, type Step } from './testing/scripted-server';

// The client's retries, errors and pagination against a scripted server on 127.0.0.1.
const BASE_DELAY = 40;
let server: ScriptedServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function clientFor(steps: Step[], maxRetries = 3) {
  server = await scriptedServer(steps);
  return new Switchboard({
    apiKey: 'sk_live_test',
    baseUrl: server.url,
    retry: { maxRetries, baseDelayMs: BASE_DELAY, maxDelayMs: 1000 },
    timeoutMs: 2000,
  });
}

const receptionist = {
  id: 'rcp_1',
  name: 'Front Desk',
  status: 'ready',
  phone_number: '+14155550199',
  assistant_id: 'asst_1',
  plan: 'standard',
  greeting: null,
  webhook_url: null,
  created_at: '2026-11-20T09:00:00.000Z',
  provisioned_at: '2026-11-20T09:00:01.000Z',
};
const apiError = (status: number, type: string, code: string, extra: object = {}) => ({
  status,
  body: { error: { type, code, message: `${code} happened`, ...extra }, request_id: 'req_abc' },
});
const gaps = (s: ScriptedServer) => s.received.slice(1).map((r, i) => r.at - s.received[i]!.at);

describe('retries', () => {
  it('answers 503 with Retry-After, then 200: waits the Retry-After and returns the 200', async () => {
    const client = await clientFor([
      {
        ...apiError(503, 'service_unavailable', 'service_unavailable'),
        headers: { 'retry-after': '1' },
      },
      { status: 200, body: receptionist },
    ]);
    await expect(client.receptionists.get('rcp_1')).resolves.toEqual(receptionist);
    expect(server?.received).toHaveLength(2);
    // Retry-After: 1 is one second, not the 20-40 ms backoff.
    expect(gaps(server as ScriptedServer)[0]).toBeGreaterThanOrEqual(990);
    expect(server?.received[0]?.headers.authorization).toBe('Bearer sk_live_test');
  });

  it('backs off exponentially on a 5xx without Retry-After, then gives up with the last error', async () => {
    const client = await clientFor([apiError(500, 'api_error', 'internal_error')], 3);
    const error = await client.calls.get('call_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SwitchboardError);
    expect(error).toMatchObject({ status: 500, type: 'api_error', code: 'internal_error' });
    expect(server?.received).toHaveLength(4); // 1 try + 3 retries, then no more
    // Equal jitter: retry n waits between half and all of 40 ms * 2^(n-1).
    const waits = gaps(server as ScriptedServer);
    waits.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual((BASE_DELAY * 2 ** i) / 2 - 2));
  });

  it('does not retry a 5xx of a request that may have acted (secret rotation)', async () => {
    const client = await clientFor([apiError(500, 'api_error', 'internal_error')]);
    await expect(
      client.webhooks.rotateSecret('6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b'),
    ).rejects.toMatchObject({
      status: 500,
    });
    expect(server?.received).toHaveLength(1);
  });

  it('retries a 429 of any request after Retry-After', async () => {
    const client = await clientFor([
      { ...apiError(429, 'rate_limit_error', 'rate_limited'), headers: { 'retry-after': '0' } },
      { status: 200, body: { subscription_id: 'x' } },
    ]);
    await expect(client.webhooks.test('6f1c2b7e-4a3d-4f8e-9b2a-1c5d7e9f0a3b')).resolves.toEqual({
      subscription_id: 'x',
    });
    expect(server?.received.map((r) => r.method)).toEqual(['POST', 'POST']);
  });

  it('retries a dropped connection of an idempotent request', async () => {
    const client = await clientFor(['drop', { status: 200, body: receptionist }]);
    await expect(client.receptionists.get('rcp_1')).resolves.toEqual(receptionist);
    expect(server?.received).toHaveLength(2);
  });

  it('gives up on a dropped connection with a typed connection error', async () => {
    const client = await clientFor(['drop'], 1);
    const error = await client.calls.get('call_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SwitchboardConnectionError);
    expect(error).toMatchObject({ status: null, type: 'connection_error', code: 'network_error' });
    expect(server?.received).toHaveLength(2);
  });

  it('times out a request that gets no answer', async () => {
    server = await scriptedServer([() => undefined]); // never answers
    const client = new Switchboard({
      apiKey: 'k',
      baseUrl: server.url,
      timeoutMs: 150,
      retry: { maxRetries: 0 },
    });
    await expect(client.calls.get('call_1')).rejects.toMatchObject({ code: 'timeout' });
  });

  it('throws at once when Retry-After is longer than it is willing to wait', async () => {
    const client = await clientFor([
      {
        ...apiError(503, 'service_unavailable', 'service_unavailable'),
        headers: { 'retry-after': '3600' },
      },
    ]);
    await expect(client.calls.get('call_1')).rejects.toMatchObject({ status: 503 });
    expect(server?.received).toHaveLength(1);
  });
});

describe('startOutbound', () => {
  const queued = { id: 'call_1', status: 'queued' };
  const body = { receptionist_id: 'rcp_1', to: '+14155550123' };

  it('generates one Idempotency-Key and reuses it on its own retries', async () => {
    const client = await clientFor([
      'drop',
      {
        ...apiError(503, 'service_unavailable', 'service_unavailable'),
        headers: { 'retry-after': '0' },
      },
      { status: 202, body: queued },
    ]);
    await expect(client.calls.startOutbound(body)).resolves.toEqual(queued);
    const keys = server?.received.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys?.[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(server?.received[2]?.body ?? '')).toEqual(body);
    // A new call is a new key.
    await client.calls.startOutbound(body);
    expect(server?.received[3]?.headers['idempotency-key']).not.toBe(keys?.[0]);
  });

  it('sends the caller key as given, and waits out idempotency_request_in_progress', async () => {
    const client = await clientFor([
      {
        ...apiError(409, 'invalid_request_error', 'idempotency_request_in_progress'),
        headers: { 'retry-after': '0' },
      },
      { status: 202, body: queued },
    ]);
    await client.calls.startOutbound(body, { idempotencyKey: 'order-42' });
    expect(server?.received.map((r) => r.headers['idempotency-key'])).toEqual([
      'order-42',
      'order-42',
    ]);
  });
});

describe('every creating request', () => {
  const csv = 'name,phone\r\nDana Whitfield,+14155550123\r\n';
  const creates: Array<[string, (c: Switchboard) => Promise<unknown>, string, string]> = [
    [
      'receptionists.create',
      (c) => c.receptionists.create({ name: 'Front Desk', area_code: '415' }),
      '/api/v1/receptionists',
      JSON.stringify({ name: 'Front Desk', area_code: '415' }),
    ],
    [
      'sms.send',
      (c) => c.sms.send({ receptionist_id: 'rcp_1', to: '+14155550123', message: 'Hi' }),
      '/api/v1/sms/send',
      JSON.stringify({ receptionist_id: 'rcp_1', to: '+14155550123', message: 'Hi' }),
    ],
    [
      'leads.create',
      (c) => c.leads.create({ phone: '+14155550123' }),
      '/api/v1/leads',
      JSON.stringify({ phone: '+14155550123' }),
    ],
    ['leads.import', (c) => c.leads.import(Readable.from([csv])), '/api/v1/leads/import', csv],
  ];

  it.each(creates)(
    '%s sends one generated Idempotency-Key on every try, with the same body',
    async (_name, create, path, body) => {
      const client = await clientFor([
        'drop',
        {
          ...apiError(503, 'service_unavailable', 'service_unavailable'),
          headers: { 'retry-after': '0' },
        },
        { status: 202, body: { id: 'x_1' } },
      ]);
      await expect(create(client)).resolves.toEqual({ id: 'x_1' });
      const received = server?.received ?? [];
      expect(received.map((r) => [r.method, r.url, r.body])).toEqual([
        ['POST', path, body],
        ['POST', path, body],
        ['POST', path, body],
      ]);
      const keys = new Set(received.map((r) => r.headers['idempotency-key']));
      expect([...keys]).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    },
  );

  it('provision is not repeated after an ambiguous failure (it may have started a round)', async () => {
    const client = await clientFor([apiError(500, 'api_error', 'internal_error')]);
    await expect(client.receptionists.provision('rcp_1')).rejects.toMatchObject({ status: 500 });
    expect(server?.received.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/api/v1/receptionists/rcp_1/provision'],
    ]);
  });
});

describe('leads.import', () => {
  const csv = 'name,phone,tags\r\nZoë Ng,+14155550123,vip;boiler\r\n';

  it('sends text, bytes and a stream alike, as text/csv', async () => {
    const client = await clientFor([{ status: 202, body: { id: 'imp_1' } }]);
    await client.leads.import(csv, { idempotencyKey: 'file-1' });
    await client.leads.import(Buffer.from(csv), { idempotencyKey: 'file-1' });
    // A stream in pieces that cut a character in two: the bytes still arrive whole.
    const bytes = Buffer.from(csv);
    await client.leads.import(Readable.from([bytes.subarray(0, 14), bytes.subarray(14)]), {
      idempotencyKey: 'file-1',
    });
    for (const r of server?.received ?? []) {
      expect([r.headers['content-type'], r.headers['idempotency-key'], r.body]).toEqual([
        'text/csv',
        'file-1',
        csv,
      ]);
    }
    expect(server?.received).toHaveLength(3);
  });

  it('refuses a stream over 20 MiB before sending anything, and stops reading it', async () => {
    const client = await clientFor([{ status: 202, body: { id: 'imp_1' } }]);
    const mib = Buffer.alloc(1024 * 1024, 'a');
    let read = 0;
    const endless = Readable.from(
      (function* () {
        for (;;) {
          read++;
          yield mib;
        }
      })(),
    );
    await expect(client.leads.import(endless)).rejects.toThrow(RangeError);
    // 20 MiB and one piece more, plus at most the stream's own read-ahead: then no more.
    expect(read).toBeGreaterThan(MAX_LEAD_IMPORT_BYTES / mib.length);
    expect(read).toBeLessThan(MAX_LEAD_IMPORT_BYTES / mib.length + 20);
    expect(endless.destroyed).toBe(true);
    expect(server?.received).toHaveLength(0);
  });
});

describe('lists and reads of the new groups', () => {
  it('build their paths and queries', async () => {
    const client = await clientFor([
      { status: 200, body: { data: [], has_more: false, cursor: null } },
    ]);
    await client.sms.listForReceptionist('rcp_1', { direction: 'inbound', limit: 2 }).toArray();
    await client.leads.search({ q: 'whitf & co', tag: 'vip' }).toArray();
    await client.usage.get({ period: '2026-10' });
    await client.usage.get();
    await client.sms.get('sms_1');
    await client.leads.get('lead_1');
    await client.leads.getImport('imp_1');
    await client.leads.update('lead_1', { status: 'won' });
    expect(server?.received.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /api/v1/receptionists/rcp_1/sms?direction=inbound&limit=2',
      'GET /api/v1/leads/search?q=whitf+%26+co&tag=vip',
      'GET /api/v1/usage?period=2026-10',
      'GET /api/v1/usage',
      'GET /api/v1/sms/sms_1',
      'GET /api/v1/leads/lead_1',
      'GET /api/v1/leads/imports/imp_1',
      'PATCH /api/v1/leads/lead_1',
    ]);
  });
});

describe('conditional edits', () => {
  it('send ifMatch as If-Match, and etagOf gives the ETag of the answer that returned an object', async () => {
    const client = await clientFor([
      { status: 200, body: receptionist, headers: { etag: 'W/"4"' } },
      { status: 200, body: { ...receptionist, name: 'Desk' }, headers: { etag: 'W/"5"' } },
      { status: 200, body: { data: [receptionist], has_more: false, cursor: null } },
    ]);
    const read = await client.receptionists.get('rcp_1');
    expect(read).toEqual(receptionist);
    expect(etagOf(read)).toBe('W/"4"');
    const updated = await client.receptionists.update(
      'rcp_1',
      { name: 'Desk' },
      { ifMatch: etagOf(read) },
    );
    expect(etagOf(updated)).toBe('W/"5"');
    await client.webhooks.delete('wh_1');
    expect(server?.received.map((r) => r.headers['if-match'])).toEqual([
      undefined,
      'W/"4"',
      undefined,
    ]);
    expect(etagOf({ ...read })).toBeUndefined();
  });
});

describe('errors', () => {
  it('carry status, type, code, param, doc_url and request_id', async () => {
    const client = await clientFor([
      apiError(400, 'invalid_request_error', 'invalid_parameter', {
        param: 'limit',
        doc_url: 'docs/API.md#error-invalid_parameter',
      }),
    ]);
    const error = (await client.receptionists
      .list({ limit: 500 })
      .toArray()
      .catch((e) => e)) as SwitchboardError;
    expect(error).toBeInstanceOf(SwitchboardError);
    expect(error).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_parameter',
      param: 'limit',
      doc_url: 'docs/API.md#error-invalid_parameter',
      request_id: 'req_abc',
      message: 'invalid_parameter happened',
    });
    expect(server?.received).toHaveLength(1); // a 4xx is never retried
    expect(server?.received[0]?.url).toBe('/api/v1/receptionists?limit=500');
  });

  it('type a response that is not the API error body (a proxy page)', async () => {
    const client = await clientFor([(_req, res) => res.writeHead(404).end('<html>nope</html>')]);
    await expect(client.calls.get('call_1')).rejects.toMatchObject({
      status: 404,
      code: 'http_error',
      request_id: null,
    });
  });
});

describe('pagination', () => {
  it('follows cursors, goes on after an empty page, and stops on has_more false', async () => {
    const page = (data: unknown[], has_more: boolean, cursor: string | null) => ({
      status: 200,
      body: { data, has_more, cursor },
    });
    const client = await clientFor([
      page([{ id: 'a' }, { id: 'b' }], true, 'c1'),
      page([], true, 'c2'),
      // has_more false ends the list, even with a cursor present.
      page([{ id: 'c' }], false, 'c3'),
    ]);
    const ids: string[] = [];
    for await (const w of client.webhooks.list({ limit: 2 })) ids.push(w.id);
    expect(ids).toEqual(['a', 'b', 'c']);
    expect(server?.received.map((r) => r.url)).toEqual([
      '/api/v1/webhooks?limit=2',
      '/api/v1/webhooks?limit=2&cursor=c1',
      '/api/v1/webhooks?limit=2&cursor=c2',
    ]);
  });

  it('follows next_cursor on GET /calls until it is null', async () => {
    const client = await clientFor([
      {
        status: 200,
        body: { calls: [{ id: 'call_1' }], next_cursor: 'n1', scope: 'all_receptionists' },
      },
      { status: 200, body: { calls: [], next_cursor: 'n2', scope: 'all_receptionists' } },
      {
        status: 200,
        body: { calls: [{ id: 'call_2' }], next_cursor: null, scope: 'all_receptionists' },
      },
    ]);
    const calls = await client.calls.list({ direction: 'inbound' }).toArray();
    expect(calls.map((c) => c.id)).toEqual(['call_1', 'call_2']);
    expect(server?.received[1]?.url).toBe('/api/v1/calls?direction=inbound&cursor=n1');
  });

  it('stops instead of looping when the API hands back the same cursor', async () => {
    const client = await clientFor([
      { status: 200, body: { data: [{ id: 'a' }], has_more: true, cursor: 'same' } },
    ]);
    await expect(client.webhooks.list({ cursor: 'same' }).toArray()).rejects.toThrow(/same cursor/);
  });
});

describe('retry arithmetic', () => {
  it('backoff doubles, is capped, and keeps at least half of each wait', () => {
    expect([1, 2, 3, 10].map((n) => backoffMs(DEFAULT_RETRY, n, () => 0))).toEqual([
      250, 500, 1000, 4000,
    ]);
    expect([1, 2, 3, 10].map((n) => backoffMs(DEFAULT_RETRY, n, () => 1))).toEqual([
      500, 1000, 2000, 8000,
    ]);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });

  it('accepts a base URL with or without the version prefix', async () => {
    server = await scriptedServer([{ status: 200, body: receptionist }]);
    for (const baseUrl of [
      server.url,
      `${server.url}/`,
      `${server.url}/api/v1`,
      `${server.url}/v1`,
    ]) {
      await new Switchboard({ apiKey: 'k', baseUrl }).receptionists.get('rcp_1');
    }
    expect(server.received.map((r) => r.url)).toEqual([
      '/api/v1/receptionists/rcp_1',
      '/api/v1/receptionists/rcp_1',
      '/api/v1/receptionists/rcp_1',
      '/v1/receptionists/rcp_1',
    ]);
  });
});
