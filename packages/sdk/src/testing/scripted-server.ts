/**
 * Test-only: a plain HTTP server on 127.0.0.1 that answers each request with the next step of
 * a script, and records what it received and when. Not exported from the package index.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the request arrived. */
  at: number;
}

/** One answer: a status and JSON body (and headers), or 'drop' to cut the connection. */
export type Step =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | 'drop'
  | ((req: Received, res: ServerResponse) => void);

export interface ScriptedServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** Starts the server; requests past the end of the script get the last step again. */
export async function scriptedServer(steps: Step[]): Promise<ScriptedServer> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      received.push(entry);
      const step = steps[Math.min(received.length - 1, steps.length - 1)];
      if (step === undefined || step === 'drop') {
        req.socket.destroy();
      } else if (typeof step === 'function') {
        step(entry, res);
      } else {
        res.writeHead(step.status, {
          'content-type': 'application/json',
          'x-request-id': `req_test${received.length}`,
          ...step.headers,
        });
        res.end(step.body === undefined ? '' : JSON.stringify(step.body));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
