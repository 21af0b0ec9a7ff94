import { loadConfigOrExit } from '@switchboard/config';
import { startTracing } from '@switchboard/telemetry';
import { createWorkerDeps } from './deps';
import { startRunner } from './runner';

// The worker process: config → deps → processors; drains on SIGTERM/SIGINT with a deadline.
async function main(): Promise<void> {
  const config = loadConfigOrExit('worker');
  // Off unless an OTLP endpoint is configured (docs/OPERATIONS.md, Tracing).
  const tracing = startTracing(config.tracing, 'switchboard-worker');
  const deps = createWorkerDeps(config);
  const runner = await startRunner(deps);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.logger.info({ signal }, 'worker draining');
    const result = await runner.close(config.shutdownTimeoutMs);
    await deps.close();
    await tracing?.shutdown();
    deps.logger.info({ result }, 'worker stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`switchboard: worker failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});
