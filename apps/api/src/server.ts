import { createServer } from 'node:http';
import { loadConfigOrExit } from '@switchboard/config';
import { flushLogger } from '@switchboard/logger';
import { serveMetrics, startTracing } from '@switchboard/telemetry';
import { createApi } from './app';
import { createDeps } from './deps';
import { answerClientErrors } from './http/client-errors';
import { guardServer } from './http/guard-server';
import { trackUnreadConnections } from './http/unread-connections';

// The thin server: config → deps → app → listen, and a graceful stop on SIGTERM/SIGINT.
const config = loadConfigOrExit('api');
// Off unless an OTLP endpoint is configured (docs/OPERATIONS.md, Tracing).
const tracing = startTracing(config.tracing, 'switchboard-api');
const deps = createDeps(config);
const { app, listener } = createApi(deps);
const server = createServer(listener).listen(config.port, () => {
  deps.logger.info({ port: config.port }, `api listening on http://127.0.0.1:${config.port}`);
});
// Idle keep-alive connections outlive the load balancer's idle timeout (docs/OPERATIONS.md,
// Running behind a load balancer).
server.keepAliveTimeout = config.http.keepAliveTimeoutMs;
server.headersTimeout = config.http.headersTimeoutMs;
answerClientErrors(server, deps.logger);
const held = guardServer(server, app, deps);
const connections = trackUnreadConnections(server);
server.on('error', (err) => {
  deps.logger.fatal({ err }, 'api could not listen');
  process.exit(1);
});
// Its own port, needing neither Postgres nor Redis; it answers until the process exits.
const metricsListen = { host: config.metricsHost, port: config.apiMetricsPort };
serveMetrics(deps.metrics.registry, metricsListen).then(
  (s) =>
    deps.logger.info(
      { ...metricsListen, port: (s.address() as { port: number }).port },
      'api metrics listening',
    ),
  (err: unknown) => {
    deps.logger.fatal({ err }, 'api metrics could not listen');
    process.exit(1);
  },
);

/** Handlers still running when the connections were cut get this long to end. */
const HANDLER_DEADLINE_MS = 5_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Stops without dropping a request the process has received:
 * 1. /readyz fails and every response says `Connection: close`; the server keeps accepting
 *    for SHUTDOWN_GRACE_MS, so requests already on their way (also those not read yet) are
 *    served and load balancers take the process out of rotation;
 * 2. once every accepted connection has sent its request (a request still unread in its
 *    buffer counts as received), it stops accepting (idle connections are closed) and waits
 *    for in-flight requests, up to SHUTDOWN_TIMEOUT_MS, after which the remaining
 *    connections are cut;
 * 3. it waits for every handler to end (they hold pool connections, whether or not their
 *    client is still there), then closes the pools.
 */
async function shutdown(signal: string): Promise<void> {
  deps.lifecycle.beginStop();
  held.release();
  deps.logger.info({ signal }, 'api stopping: not ready, finishing in-flight requests');
  await sleep(config.shutdownGraceMs);
  const deadline = setTimeout(() => {
    deps.logger.warn('api shutdown deadline: cutting the remaining connections');
    server.closeAllConnections();
  }, config.shutdownTimeoutMs);
  await connections.read();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  clearTimeout(deadline);
  const ended = await Promise.race([
    deps.lifecycle.idle().then(() => true),
    sleep(HANDLER_DEADLINE_MS).then(() => false),
  ]);
  if (!ended) deps.logger.warn('api stopping with handlers still running');
  await deps.close();
  await tracing?.shutdown();
  deps.logger.info('api stopped');
  // The log is written in batches: every line, this one included, before the process ends.
  await flushLogger(deps.logger);
  process.exit(0);
}

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    shutdown(signal).catch((err: unknown) => {
      deps.logger.fatal({ err }, 'api shutdown failed');
      process.exit(1);
    });
  });
}
