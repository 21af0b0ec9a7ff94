/**
 * Test-only: a local HTTPS receiver on 127.0.0.1 with a throwaway self-signed certificate.
 * Not exported from the package index.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

/** PEM key and certificate. */
export interface TestCertificate {
  key: string;
  cert: string;
}

/** Generates a 1-day self-signed certificate whose SAN lists `altNames` (openssl syntax). */
export function generateCertificate(altNames: string): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-cert-'));
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost'].concat([
        '-addext',
        `subjectAltName=${altNames}`,
        '-days',
        '1',
        '-keyout',
        key,
        '-out',
        cert,
      ]),
      { stdio: 'ignore' },
    );
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the receiver saw of one request. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** TLS SNI the client sent. */
  servername: string | false;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A running receiver; `requests` fills as requests complete. */
export interface TestReceiver {
  port: number;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts an HTTPS server on 127.0.0.1 that routes by path to `routes`, 404 otherwise. */
export async function startReceiver(
  certificate: TestCertificate,
  routes: Readonly<Record<string, Handler>>,
): Promise<TestReceiver> {
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer(certificate, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      requests.push({
        method: req.method ?? '',
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        servername: (req.socket as TLSSocket).servername ?? false,
      });
      const handler = routes[path];
      if (handler) handler(req, res);
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TCP port on 127.0.0.1 that was free a moment ago and now refuses connections. */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
