import { loadConfigOrExit } from '@switchboard/config';
import { createApp } from './app';
import { createDeps } from './deps';

// The thin server: config → deps → app → listen, and a graceful stop on SIGTERM/SIGINT.
const config = loadConfigOrExit();
const deps = createDeps(config);
const app = createApp(deps);
const server = app.listen(config.port, () => {
  deps.logger.info({ port: config.port }, `api listening on http://127.0.0.1:${config.port}`);
});
server.on('error', (err) => {
  deps.logger.fatal({ err }, 'api could not listen');
  process.exit(1);
});

let stopping = false;
function shutdown(signal: string): void {
  if (stopping) return;
  stopping = true;
  deps.logger.info({ signal }, 'api stopping: finishing in-flight requests');
  // Stop accepting, let in-flight requests finish, then close pools. Past the deadline,
  // remaining connections are cut so the process always exits.
  const deadline = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
  deadline.unref();
  server.close(async () => {
    await deps.close();
    deps.logger.info('api stopped');
    process.exit(0);
  });
  server.closeIdleConnections();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
