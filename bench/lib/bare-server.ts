import type { Express } from 'express';

/**
 * Serves `app` on 127.0.0.1:`port` until SIGTERM or SIGINT, then stops taking connections,
 * runs `close` (the app's pools and connections) and exits 0.
 */
export function serveUntilSignal(app: Express, port: number, close: () => Promise<unknown>): void {
  const server = app.listen(port, '127.0.0.1');
  const stop = () => {
    server.close(() => {
      void close().finally(() => process.exit(0));
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** Runs a bare server's `main`; a failure is one line on stderr and exit code 1. */
export function runBareServer(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`bare-server: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
