import { createServer, type RequestListener, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/**
 * Serves GET /metrics of `registry` on its own port (0 = any free port; read the bound one
 * from the server), on `host` only: loopback by default (METRICS_HOST), so the metrics are
 * not exposed to every network the machine is on. It touches neither Postgres nor Redis
 * unless `beforeScrape` does, and a failing `beforeScrape` never fails the scrape. Any
 * other path goes to `others` (e.g. the worker's queue dashboard), else 404.
 */
export async function serveMetrics(
  registry: Registry,
  listen: { host: string; port: number },
  beforeScrape: () => Promise<void> = async () => undefined,
  others?: RequestListener,
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      if (others) others(req, res);
      else res.writeHead(404).end();
      return;
    }
    beforeScrape()
      .catch(() => undefined)
      .then(() => registry.metrics())
      .then((body) => {
        res.writeHead(200, { 'Content-Type': registry.contentType }).end(body);
      })
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, resolve);
  });
  return server;
}
