import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { guardServer } from '../../apps/api/src/http/guard-server';
import { bogusKey as bogus, SMALL_ANONYMOUS_LIMITS as SMALL } from '../support/anonymous-limits';
import { createTestContext, type TestContext } from '../support/context';
import { listen } from '../support/keep-alive';

// A refused client's next connection waits, unread, until the Retry-After it was told
// (docs/decisions/0121-a-refused-clients-next-connection-waits.md), on the server as
// server.ts wires it (ctx.listener behind guardServer). The flooding client is 127.0.0.2;
// another client is 127.0.0.1. Small buckets (5 at once, 1 a second) so a handful of
// requests empties one.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext(SMALL);
});
afterAll(async () => {
  await ctx.close();
});

async function serve(
  c: TestContext,
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const { server, close } = await listen(c.listener);
  guardServer(server, c.app, c.deps);
  return { server, port: (server.address() as AddressInfo).port, close };
}

/** A connection from `from` that sends one request; what it received, and when it began. */
interface Exchange {
  socket: Socket;
  /** performance.now() when the first byte of the answer arrived. */
  firstByteAt: Promise<number>;
  /** The whole answer, once the server closed the connection or the answer ended. */
  answer: Promise<string>;
}

function exchange(port: number, from: string, headers: string, keepAlive = false): Exchange {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from });
  let text = '';
  const firstByteAt = new Promise<number>((resolve) =>
    socket.once('data', () => resolve(performance.now())),
  );
  const answer = new Promise<string>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      // One answer with a JSON body of Content-Length bytes: done once it is all here.
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (end !== -1 && length !== undefined && text.length >= end + 4 + Number(length)) {
        resolve(text);
        socket.end();
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
  socket.write(
    `GET /api/v1/calls HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}Connection: ${keepAlive ? 'keep-alive' : 'close'}\r\n\r\n`,
  );
  return { socket, firstByteAt, answer };
}

const statusOf = (answer: string): number => Number(answer.slice(9, 12));
/** The server listens on every interface: it sees an IPv4 client as `::ffff:` + address. */
const toldToWait = (c: TestContext, address: string) =>
  c.deps.anonymousLimits.toldToWait(`::ffff:${address}`);
const held = async (c: TestContext) =>
  (await c.deps.metrics.connectionsHeld.get()).values[0]?.value ?? 0;

it('leaves a refused address unread until its Retry-After, while another address is served', async () => {
  const { server, port, close } = await serve(ctx);
  try {
    // Empty 127.0.0.2's bucket: its answers are 401 until Redis refuses it (a 429 that closes).
    let refused = '';
    for (let i = 0; i < 20 && statusOf(refused) !== 429; i++) {
      refused = await exchange(port, '127.0.0.2', `Authorization: ${bogus(i)}\r\n`).answer;
    }
    expect(statusOf(refused)).toBe(429);
    expect(refused).toMatch(/\r\nconnection: close\r\n/i);
    const retryAfter = Number(/\r\nretry-after: (\d+)\r\n/i.exec(refused)?.[1]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    const toldUntil = toldToWait(ctx, '127.0.0.2');
    expect(toldUntil).toBeDefined();

    // Its next connection is accepted and held: counted (by guardServer's listener, which
    // runs before this test's), and its request not read.
    const before = await held(ctx);
    const accepted = once(server, 'connection');
    const next = exchange(port, '127.0.0.2', `Authorization: ${bogus(100)}\r\n`);
    await accepted;
    expect(await held(ctx)).toBe(before + 1);

    // Another address is answered meanwhile (a 401: a made-up key within its own bucket).
    const other = await exchange(port, '127.0.0.1', `Authorization: ${bogus(200)}\r\n`).answer;
    expect(statusOf(other)).toBe(401);

    // The held request is answered, and not before the instant its client was told.
    const answered = await next.answer;
    expect([401, 429]).toContain(statusOf(answered));
    expect(await next.firstByteAt).toBeGreaterThanOrEqual(toldUntil!);
  } finally {
    await close();
  }
});

it('never holds the connections of a proxy that TRUST_PROXY trusts', async () => {
  const c = await createTestContext({ ...SMALL, TRUST_PROXY: 'loopback' });
  const { port, close } = await serve(c);
  try {
    // The client behind the proxy (X-Forwarded-For) is refused; its proxy's connections are
    // not its own: they stay open and are read at once.
    const xff = 'X-Forwarded-For: 203.0.113.9\r\n';
    let refused = '';
    for (let i = 0; i < 20 && statusOf(refused) !== 429; i++) {
      const headers = `${xff}Authorization: ${bogus(i)}\r\n`;
      const proxied = exchange(port, '127.0.0.2', headers, true);
      refused = await proxied.answer;
      proxied.socket.destroy();
    }
    expect(statusOf(refused)).toBe(429);
    expect(refused).not.toMatch(/\r\nconnection: close\r\n/i);
    expect(c.deps.anonymousLimits.toldToWait('203.0.113.9')).toBeUndefined();
    expect(toldToWait(c, '127.0.0.2')).toBeUndefined();
    const next = await exchange(port, '127.0.0.2', `${xff}Authorization: ${bogus(100)}\r\n`).answer;
    expect(statusOf(next)).toBe(429);
    expect(await held(c)).toBe(0);
  } finally {
    await close();
    await c.close();
  }
});
