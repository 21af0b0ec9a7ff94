import { Agent, request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bogusKey as bogus, SMALL_ANONYMOUS_LIMITS as SMALL } from '../support/anonymous-limits';
import { createTestContext, type TestContext } from '../support/context';
import { listen } from '../support/keep-alive';

// The early refusal sits in front of the Express app (docs/decisions/0119-early-refusal-before-express.md):
// once Redis has refused a client address, that address's next requests without a valid
// credential are answered by the server's request listener (ctx.listener, as server.ts
// runs it) with the app's own 429, counted in the app's metric series, and never reach
// Express; another address is served by the app as usual. The client address follows
// TRUST_PROXY as `req.ip` does. Small buckets (5 at once, 1 a second) so a handful of
// requests empties one.
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

/** What a request looked like as the server saw it, by its X-Probe. */
interface Seen {
  /** Its client address was refused (AnonymousLimits.refusal) when it arrived. */
  refusedOnArrival: boolean;
  /** Express took it: the app gives every request it handles its own prototype. */
  reachedExpress?: boolean;
}

/**
 * `c.listener` served (test/support/keep-alive.ts `listen`), between two listeners of the same `request` event: one before
 * it notes whether the request's client address (`addressOf`) is refused as it arrives, one
 * after it whether Express took the request (Express sets the request's prototype to the
 * app's in the same turn, before any routing).
 */
async function serve(
  c: TestContext,
  addressOf: (req: IncomingMessage) => string,
): Promise<{ close(): Promise<void>; port: number; seen: Map<string, Seen> }> {
  const seen = new Map<string, Seen>();
  const { server, close } = await listen(c.listener);
  server.prependListener('request', (req: IncomingMessage) => {
    const refusal = c.deps.anonymousLimits.refusal(addressOf(req));
    seen.set(String(req.headers['x-probe']), { refusedOnArrival: refusal !== undefined });
  });
  server.on('request', (req: IncomingMessage) => {
    const probe = seen.get(String(req.headers['x-probe']));
    if (probe) probe.reachedExpress = Object.getPrototypeOf(req) === c.app.request;
  });
  return { close, port: (server.address() as AddressInfo).port, seen };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** GET /api/v1/calls from `from` on `agent`'s connection, with `headers`. */
function get(
  port: number,
  from: string,
  agent: Agent,
  headers: Record<string, string>,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/api/v1/calls', localAddress: from, agent, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The value of one series of `metric` (0 before its first count). */
async function seriesValue(
  metric: { get(): Promise<{ values: Array<{ labels: object; value: number }> }> },
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await metric.get();
  const match = values.find((v) =>
    Object.entries(labels).every(
      ([k, value]) => (v.labels as Record<string, unknown>)[k] === value,
    ),
  );
  return match?.value ?? 0;
}

/** The early 429's series: no routing ran, so its route is `unmatched`, as before. */
const REFUSED = { method: 'GET', route: 'unmatched', status_class: '4xx', status: '429' };
const counts = async (c: TestContext) => ({
  requests: await seriesValue(c.deps.metrics.requests, REFUSED),
  rateLimited: await seriesValue(c.deps.metrics.rateLimited, { route: 'unmatched' }),
});

/**
 * Sends made-up keys (`headers(i)`) until one arrives while its address is refused (at most
 * 60); checks that one's answer and metrics and returns it.
 */
async function refusedEarly(
  c: TestContext,
  target: { port: number; seen: Map<string, Seen> },
  agent: Agent,
  headers: (i: number) => Record<string, string>,
): Promise<Answer> {
  for (let i = 0; i < 60; i++) {
    const probe = `${Date.now()}-${i}`;
    const before = await counts(c);
    const answer = await get(target.port, '127.0.0.1', agent, {
      ...headers(i),
      Authorization: bogus(i),
      'X-Probe': probe,
      'X-Request-Id': `client.${probe}`,
    });
    const seen = target.seen.get(probe);
    if (!seen?.refusedOnArrival) {
      // Its address had tokens (401) or Redis refused it (429): the app answered.
      expect([401, 429]).toContain(answer.status);
      expect(seen?.reachedExpress).toBe(true);
      continue;
    }
    expect(seen.reachedExpress).toBe(false);
    expect(answer.status).toBe(429);
    expect(answer.body).toEqual({
      error: {
        type: 'rate_limit_error',
        code: 'rate_limited',
        message: expect.stringMatching(/^Too many requests without a valid credential/),
        doc_url: 'docs/API.md#error-rate_limited',
      },
      request_id: `client.${probe}`,
    });
    expect(answer.headers['x-request-id']).toBe(`client.${probe}`);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(answer.headers['ratelimit-policy']).toBe('"client-address";q=5;w=5');
    expect(answer.headers.ratelimit).toBe(
      `"client-address";r=0;t=${answer.headers['retry-after']}`,
    );
    const before1 = { requests: before.requests + 1, rateLimited: before.rateLimited + 1 };
    expect(await counts(c)).toEqual(before1);
    return answer;
  }
  throw new Error('no request arrived while its address was refused within 60');
}

it('a source over its limit gets the 429 before Express, counted; another source is served', async () => {
  const target = await serve(ctx, (req) => req.socket.remoteAddress ?? '');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const other = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    // X-Forwarded-For is not believed without TRUST_PROXY: a flooder cannot name itself
    // another address to get past the refusal.
    const refused = await refusedEarly(ctx, target, agent, (i) => ({
      'X-Forwarded-For': `198.51.100.${i + 1}`,
    }));
    // The client is the peer: its next request comes on a new connection.
    expect(refused.headers.connection).toBe('close');
    // Another address, at once: Express serves it (its bucket has tokens: a 401).
    const probe = 'other-address';
    const answer = await get(target.port, '127.0.0.2', other, {
      Authorization: bogus(999),
      'X-Probe': probe,
    });
    expect(answer.status).toBe(401);
    expect(target.seen.get(probe)).toEqual({ refusedOnArrival: false, reachedExpress: true });
  } finally {
    agent.destroy();
    other.destroy();
    await target.close();
  }
});

it('behind a trusted proxy, the address X-Forwarded-For names is refused before Express; others are served', async () => {
  const target = await serve(proxied, (req) =>
    String(req.headers['x-forwarded-for'] ?? req.socket.remoteAddress),
  );
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const refused = await refusedEarly(proxied, target, agent, () => ({
      'X-Forwarded-For': '203.0.113.7',
    }));
    // The peer is the proxy, whose connection carries other clients: kept open.
    expect(refused.headers.connection).toBe('keep-alive');
    // Another client of the same proxy, on the same connection, and the proxy itself.
    for (const [probe, forwarded] of [
      ['neighbour', { 'X-Forwarded-For': '203.0.113.8' }],
      ['proxy-itself', {}],
    ] as const) {
      const answer = await get(target.port, '127.0.0.1', agent, {
        ...forwarded,
        Authorization: bogus(999),
        'X-Probe': probe,
      });
      expect(answer.status).toBe(401);
      expect(target.seen.get(probe)).toEqual({ refusedOnArrival: false, reachedExpress: true });
    }
  } finally {
    agent.destroy();
    await target.close();
  }
});
