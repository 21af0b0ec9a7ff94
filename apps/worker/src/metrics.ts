import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The worker's Prometheus metrics, on a registry of its own (no global state). */
export interface Metrics {
  registry: Registry;
  deliveries: Counter<'outcome'>;
  attemptDuration: Histogram<'result'>;
  deliveryLag: Histogram;
  queueDepth: Gauge<'queue' | 'state'>;
  eventsRelayed: Counter;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'switchboard_worker_' });
  return {
    registry,
    deliveries: new Counter({
      name: 'switchboard_deliveries_total',
      help: 'Deliveries that reached an outcome (succeeded, retry, failed, canceled)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    attemptDuration: new Histogram({
      name: 'switchboard_delivery_attempt_seconds',
      help: 'Duration of one delivery attempt (HTTP POST)',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    deliveryLag: new Histogram({
      name: 'switchboard_delivery_lag_seconds',
      help: 'Event committed to the outbox → first successful attempt',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'switchboard_queue_jobs',
      help: 'Jobs per queue and state',
      labelNames: ['queue', 'state'],
      registers: [registry],
    }),
    eventsRelayed: new Counter({
      name: 'switchboard_events_relayed_total',
      help: 'Outbox events published to the events queue',
      registers: [registry],
    }),
  };
}

/** Serves GET /metrics on its own port (0 = any free port; the bound port is returned). */
export async function serveMetrics(
  metrics: Metrics,
  port: number,
  beforeScrape: () => Promise<void>,
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    beforeScrape()
      .catch(() => undefined)
      .then(() => metrics.registry.metrics())
      .then((body) => {
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(body);
      })
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', resolve);
  });
  return server;
}
