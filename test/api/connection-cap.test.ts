import { Agent, createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardServer } from '../../apps/api/src/http/guard-server';
import { createTestContext, type TestContext } from '../support/context';

// The cap on open connections per client address (API_MAX_CONNECTIONS_PER_IP;
// docs/OPERATIONS.md, Connection cap), wired as the API's server wires it, on a real server
// reached from two loopback addresses: 127.0.0.1 (the source that fills its cap) and
// 127.0.0.2 (another client).
const CAP = 3;
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ API_MAX_CONNECTIONS_PER_IP: String(CAP) });
});
afterAll(async () => {
  await ctx.close();
});

/** The app on 127.0.0.1, capped as server.ts caps it. */
async function serve(c: TestContext): Promise<{ server: Server; port: number }> {
  const server = createServer(c.app);
  guardServer(server, c.app, c.deps);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/**
 * GET /healthz on a connection of its own (one kept-alive socket per agent, from `from`):
 * its status, or the error that ended the connection first.
 */
function healthz(port: number, from: string, agent: Agent): Promise<number | string> {
  return new Promise((resolve) => {
    const req = get(
      { host: '127.0.0.1', port, path: '/healthz', localAddress: from, agent },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

const agent = () => new Agent({ keepAlive: true, maxSockets: 1 });

const refusedCount = async (c: TestContext) =>
  (await c.deps.metrics.connectionsRefused.get()).values[0]?.value ?? 0;

it('refuses the (N+1)th connection of one address at once, while another address connects', async () => {
  const { server, port } = await serve(ctx);
  const held = Array.from({ length: CAP }, agent);
  const extra = [agent(), agent(), agent()];
  try {
    // N connections from 127.0.0.1, each answered and kept open (kept alive by its agent).
    for (const a of held) expect(await healthz(port, '127.0.0.1', a)).toBe(200);
    const before = await refusedCount(ctx);
    // The (N+1)th is reset before its request is read: no answer.
    expect(await healthz(port, '127.0.0.1', extra[0]!)).toBe('ECONNRESET');
    expect(await refusedCount(ctx)).toBe(before + 1);
    // Another address is not affected, and the N open connections still work.
    expect(await healthz(port, '127.0.0.2', extra[1]!)).toBe(200);
    for (const a of held) expect(await healthz(port, '127.0.0.1', a)).toBe(200);
    // A connection closed frees its place.
    held[0]!.destroy();
    let status: number | string = 'ECONNRESET';
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = await healthz(port, '127.0.0.1', extra[2]!);
    }
    expect(status).toBe(200);
  } finally {
    for (const a of [...held, ...extra]) a.destroy();
    await closeServer(server);
  }
});

it('does not count the connections of a proxy that TRUST_PROXY trusts', async () => {
  const c = await createTestContext({ API_MAX_CONNECTIONS_PER_IP: '1', TRUST_PROXY: 'loopback' });
  const { server, port } = await serve(c);
  const agents = [agent(), agent(), agent()];
  try {
    for (const a of agents) expect(await healthz(port, '127.0.0.1', a)).toBe(200);
    expect(await refusedCount(c)).toBe(0);
  } finally {
    for (const a of agents) a.destroy();
    await closeServer(server);
    await c.close();
  }
});
