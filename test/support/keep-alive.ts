import { Agent, createServer, request, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real server for `app`, listening as supertest does (every interface, reached at
 * 127.0.0.1), for what supertest cannot show: supertest's requests each say
 * `Connection: close`, so whether the server keeps a connection is seen only with a client
 * of keep-alive connections (`keepAliveRequest`).
 */
export async function listen(app: RequestListener): Promise<{
  server: Server;
  url: string;
  close(): Promise<void>;
}> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A client that keeps its connection between requests (one socket). */
export const keepAliveAgent = (): Agent => new Agent({ keepAlive: true, maxSockets: 1 });

/** One request on `agent`: its status and its `Connection` field (`keep-alive` or `close`). */
export function keepAliveRequest(
  agent: Agent,
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { agent, method: opts.method ?? 'GET', headers: opts.headers ?? {} },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }),
        );
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}
