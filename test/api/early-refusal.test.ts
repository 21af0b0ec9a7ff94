import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { bogusKey as bogus, SMALL_ANONYMOUS_LIMITS as SMALL } from '../support/anonymous-limits';
import { createTestContext, type TestContext } from '../support/context';
import { keepAliveAgent, keepAliveRequest, listen } from '../support/keep-alive';
import { waitFor } from '../support/wait';

// The early refusal (docs/API.md, Rate limits): once Redis has refused an address's request
// without a valid credential, that address's next such requests are answered 429 by this
// process alone until a token is back: no Redis call, no routing or lookup, the same answer.
// Small buckets (5 at once, 1 a second) so a handful of requests empties one; a token comes
// back within a second, so each check below starts from a fresh refusal.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext(SMALL);
});
afterAll(async () => {
  await ctx.close();
});

/** Requests without a valid credential, of every kind the address's bucket counts. */
const probes: Array<(i: number) => request.Test> = [
  (i) => request(ctx.listener).get('/api/v1/calls').set('Authorization', bogus(i)),
  () => request(ctx.listener).get('/v1/leads/search?q=ab'),
  () => request(ctx.listener).post('/api/v1/leads').set('Authorization', 'Basic abc').send('{'),
  () =>
    request(ctx.listener)
      .post('/internal/v1/telephony/events')
      .set('Authorization', 'Bearer wrong-token')
      .send({}),
  () => request(ctx.listener).post('/api/v1/portal/exchange').send({ code: 'x' }),
];

/** One request, and how many Redis commands the API process sent while it was served. */
async function counted(
  send: () => request.Test,
): Promise<{ res: request.Response; redis: number }> {
  const sent = jest.spyOn(ctx.deps.redis, 'sendCommand');
  try {
    const res = await send();
    return { res, redis: sent.mock.calls.length };
  } finally {
    sent.mockRestore();
  }
}

/** Probes until one is refused without Redis (at most 60): the address is refused now. */
async function refusedEarly(): Promise<request.Response> {
  for (let i = 0; i < 60; i++) {
    const { res, redis } = await counted(() => probes[i % probes.length]!(1000 + i));
    if (res.status === 429 && redis === 0) return res;
  }
  throw new Error('no request was refused without Redis within 60');
}

const expectAddressLimited = (res: request.Response) => {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    error: {
      type: 'rate_limit_error',
      code: 'rate_limited',
      message: expect.stringMatching(/^Too many requests without a valid credential/),
      doc_url: 'docs/API.md#error-rate_limited',
    },
    request_id: res.headers['x-request-id'],
  });
  expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(res.headers['ratelimit-policy']).toBe('"client-address";q=5;w=5');
  expect(res.headers.ratelimit).toBe(`"client-address";r=0;t=${res.headers['retry-after']}`);
};

it('after Redis refuses an address, its next requests are refused without Redis until a token is back', async () => {
  let previous = 0;
  let early = 0;
  let redisRefusals = 0;
  for (let i = 0; i < 300 && early < 10; i++) {
    const { res, redis } = await counted(() => probes[i % probes.length]!(i));
    if (res.status === 429 && previous === 429) {
      // Redis refused this address, and no 401 came since: no token is back yet.
      expect(redis).toBe(0);
      expectAddressLimited(res);
      early++;
    } else if (res.status === 429) {
      expect(redis).toBeGreaterThan(0);
      expectAddressLimited(res);
      redisRefusals++;
    } else {
      // A token was back: Redis was asked, and the request went on to its usual refusal.
      expect([400, 401]).toContain(res.status);
    }
    previous = res.status;
  }
  expect(early).toBe(10);
  expect(redisRefusals).toBeGreaterThanOrEqual(1);
});

it('a refused address still gets its known key, the ingestion token and routes without a credential served', async () => {
  const { auth } = await ctx.tenant(['read']);
  // A key's first request takes a token like any unknown one: once a token is back.
  await waitFor(
    'the key seen valid',
    async () =>
      (await request(ctx.listener).get('/api/v1/usage').set('Authorization', auth)).status === 200,
  );
  const checks: Array<[() => request.Test, number]> = [
    [() => request(ctx.listener).get('/api/v1/usage').set('Authorization', auth), 200],
    [
      () =>
        request(ctx.listener)
          .post('/internal/v1/telephony/events')
          .set('Authorization', `Bearer ${ctx.config.ingestToken}`)
          .send({}),
      400,
    ],
    [() => request(ctx.listener).get('/healthz'), 200],
    [() => request(ctx.listener).get('/api/v1/openapi.json'), 200],
    [() => request(ctx.listener).get('/api/v1/no-such-route'), 404],
    [() => request(ctx.listener).put('/api/v1/usage'), 405],
  ];
  for (const [send, status] of checks) {
    await refusedEarly();
    expect((await send()).status).toBe(status);
  }
});

it('a request refused early is counted in the metrics as rate limited', async () => {
  const total = async () =>
    (await ctx.deps.metrics.rateLimited.get()).values.reduce((n, v) => n + v.value, 0);
  let seen = 0;
  for (let i = 0; i < 10 && seen < 3; i++) {
    await refusedEarly();
    const before = await total();
    const { res, redis } = await counted(() => probes[0]!(5000 + i));
    // Its token may have come back meanwhile: then Redis answered, not the case looked at.
    if (res.status !== 429 || redis !== 0) continue;
    expect(await total()).toBe(before + 1);
    seen++;
  }
  expect(seen).toBe(3);
});

it('an early 429 is written in the turn its request arrives: no timer, no Redis', async () => {
  // Around the app's own 'request' listener: one before it notes whether the address is
  // refused as the request arrives, one after it (same turn) whether the answer is written.
  // An answer written by then waited for no timer, no Redis and no I/O at all (a held
  // answer, as the tarpit this replaced sent, is still unwritten there).
  const server = createServer(ctx.listener);
  const arrivals = new Map<string, { refused: boolean; written?: boolean }>();
  server.prependListener('request', (req: IncomingMessage) => {
    const address = req.socket.remoteAddress ?? '';
    arrivals.set(String(req.headers['x-probe']), {
      refused: ctx.deps.anonymousLimits.refusal(address) !== undefined,
    });
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const arrival = arrivals.get(String(req.headers['x-probe']));
    if (arrival) arrival.written = res.writableEnded;
  });
  // Listening as supertest does (every interface, reached at 127.0.0.1), its requests come
  // from the address that refusedEarly empties.
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    let seen = 0;
    for (let i = 0; i < 20 && seen < 3; i++) {
      // Until a 429 (Redis's own, or an early one): the address is refused from then on for
      // about a second, so the next request, sent at once, arrives refused.
      for (let j = 0; (await probes[j % probes.length]!(8000 + j)).status !== 429; j++) {
        expect(j).toBeLessThan(60);
      }
      const res = await request(`http://127.0.0.1:${port}`)
        .get('/api/v1/calls')
        .set('Authorization', bogus(7000 + i))
        .set('X-Probe', String(i));
      // Its token may have come back before it arrived: then Redis answers, not the case here.
      if (!arrivals.get(String(i))?.refused) continue;
      expectAddressLimited(res);
      expect(arrivals.get(String(i))?.written).toBe(true);
      seen++;
    }
    expect(seen).toBe(3);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

it('an address over its limit gets its 429s on connections closed after them; its 401s keep theirs', async () => {
  const api = await listen(ctx.listener);
  const agent = keepAliveAgent();
  try {
    const seen = { 401: 0, 429: 0 };
    // Paced (a token comes back each second), so that some requests get theirs: 401s.
    for (let i = 0; i < 100 && (seen[429] < 5 || seen[401] === 0); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      const { status, connection } = await keepAliveRequest(agent, `${api.url}/api/v1/calls`, {
        headers: { authorization: bogus(9000 + i) },
      });
      // Early 429s and Redis's own alike: the client opens a new connection for the next.
      if (status === 429) expect(connection).toBe('close');
      else expect([status, connection]).toEqual([401, 'keep-alive']);
      seen[status as 401 | 429]++;
    }
    expect(seen[429]).toBeGreaterThanOrEqual(5);
    expect(seen[401]).toBeGreaterThan(0);
  } finally {
    agent.destroy();
    await api.close();
  }
});
