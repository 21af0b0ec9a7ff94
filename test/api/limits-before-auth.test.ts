import request from 'supertest';
import { bogusKey as bogus, SMALL_ANONYMOUS_LIMITS as SMALL } from '../support/anonymous-limits';
import { createTestContext, type TestContext } from '../support/context';
import { keepAliveAgent, keepAliveRequest, listen } from '../support/keep-alive';

// Limits before authentication (docs/API.md, Rate limits): a token bucket per client address
// for requests without a valid credential, and a negative cache of unknown keys, so a flood
// of made-up keys costs neither unlimited answers nor a Postgres query per request. Small
// buckets here (5 at once, 1 a second) so a handful of requests reach the limit.
let ctx: TestContext;
let proxied: TestContext;
beforeAll(async () => {
  ctx = await createTestContext(SMALL);
  proxied = await createTestContext({ ...SMALL, TRUST_PROXY: 'loopback' });
});
afterAll(async () => {
  await ctx.close();
  await proxied.close();
});

const get = (c: TestContext, auth?: string, forwardedFor?: string) => {
  const r = request(c.app).get('/api/v1/receptionists');
  if (auth) r.set('Authorization', auth);
  if (forwardedFor) r.set('X-Forwarded-For', forwardedFor);
  return r;
};

/** Sends `send(i)` until the first 429 (at most `max`): how many came before, and it. */
async function untilLimited(send: (i: number) => Promise<request.Response>, max: number) {
  for (let i = 0; i < max; i++) {
    const res = await send(i);
    if (res.status === 429) return { before: i, limited: res };
    expect(res.status).toBe(401);
  }
  throw new Error(`no 429 within ${max} requests`);
}

const expectAddressLimited = (res: request.Response) => {
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(res.headers['ratelimit-policy']).toBe('"client-address";q=5;w=5');
  expect(res.headers.ratelimit).toMatch(/^"client-address";r=0;t=\d+$/);
};

it('made-up keys from one address: 401 for the burst, then 429; a known key still works', async () => {
  const { auth } = await ctx.tenant(['read']);
  // Its first request took a token (not yet seen valid); from now on it takes none.
  expect((await get(ctx, auth)).status).toBe(200);
  const started = Date.now();
  const { before, limited } = await untilLimited((i) => get(ctx, bogus(i)), 30);
  expect(before).toBeGreaterThanOrEqual(4);
  expect(before).toBeLessThanOrEqual(4 + Math.ceil((Date.now() - started) / 1000));
  expectAddressLimited(limited);
  expect((await get(ctx, auth)).status).toBe(200);
});

it('no Authorization and a malformed one count against the same bucket', async () => {
  const c = await createTestContext(SMALL);
  try {
    const { before, limited } = await untilLimited(
      (i) => get(c, i % 2 ? 'Basic abc' : undefined),
      30,
    );
    expect(before).toBeGreaterThanOrEqual(5);
    expectAddressLimited(limited);
  } finally {
    await c.close();
  }
});

it('a wrong ingestion token is limited per address too; the right one is not', async () => {
  const c = await createTestContext(SMALL);
  try {
    const ingest = (auth: string) =>
      request(c.app).post('/internal/v1/telephony/events').set('Authorization', auth).send({});
    const { before, limited } = await untilLimited(() => ingest('Bearer wrong-token'), 30);
    expect(before).toBeGreaterThanOrEqual(5);
    expectAddressLimited(limited);
    // The right token is checked first: a 400 for the empty message, not a 429.
    expect((await ingest(`Bearer ${c.config.ingestToken}`)).status).toBe(400);
  } finally {
    await c.close();
  }
});

it('an unknown key costs one Postgres query, then none (negative cache)', async () => {
  const c = await createTestContext({
    UNAUTHENTICATED_RATE_LIMIT_PER_SECOND: '1000',
    UNAUTHENTICATED_RATE_LIMIT_BURST: '1000',
  });
  const client = (c.deps.knex as unknown as { client: { acquireConnection: () => unknown } })
    .client;
  const acquired = jest.spyOn(client, 'acquireConnection');
  try {
    expect((await get(c, bogus(1))).status).toBe(401);
    const first = acquired.mock.calls.length;
    expect(first).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 20; i++) expect((await get(c, bogus(1))).status).toBe(401);
    expect(acquired.mock.calls.length).toBe(first);
    // A key that exists is looked up, and a new key is never shadowed by a cached miss.
    const { auth } = await c.tenant(['read']);
    expect((await get(c, auth)).status).toBe(200);
    expect(acquired.mock.calls.length).toBeGreaterThan(first);
  } finally {
    acquired.mockRestore();
    await c.close();
  }
});

it('X-Forwarded-For names the client only when TRUST_PROXY trusts the proxy', async () => {
  // Not trusted: a new X-Forwarded-For on each request does not escape the bucket.
  const spoofed = await untilLimited((i) => get(ctx, bogus(100 + i), `203.0.113.${i}`), 30);
  expectAddressLimited(spoofed.limited);
  // Trusted (the proxy is on loopback): each forwarded client has its own bucket.
  const a = await untilLimited((i) => get(proxied, bogus(200 + i), '203.0.113.7'), 30);
  expectAddressLimited(a.limited);
  expect((await get(proxied, bogus(300), '203.0.113.8')).status).toBe(401);
});

it("a 429 keeps a trusted proxy's connection, which carries other clients' requests", async () => {
  const api = await listen(proxied.app);
  const agent = keepAliveAgent();
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 30 && !statuses.includes(429); i++) {
      const { status, connection } = await keepAliveRequest(agent, `${api.url}/api/v1/calls`, {
        headers: { authorization: bogus(400 + i), 'x-forwarded-for': '203.0.113.9' },
      });
      expect(connection).toBe('keep-alive');
      statuses.push(status);
    }
    expect(statuses).toContain(429);
  } finally {
    agent.destroy();
    await api.close();
  }
});
