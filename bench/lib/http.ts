import { Agent, request } from 'node:http';
import { createServer } from 'node:net';

/** One keep-alive connection, like a client paging through a list. */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

export interface HttpResponse {
  status: number;
  body: string;
}

/** GET over HTTP/1.1 on 127.0.0.1 only; resolves once the whole body has arrived. */
export function httpGet(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<HttpResponse> {
  const target = new URL(url);
  if (target.hostname !== '127.0.0.1') {
    return Promise.reject(new Error(`refusing to send a request to ${target.hostname}`));
  }
  return new Promise((resolve, reject) => {
    const req = request(target, { method: 'GET', headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${target.pathname} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** A TCP port that is free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

export function closeHttpAgent(): void {
  agent.destroy();
}
