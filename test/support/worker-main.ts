import { loadConfigOrExit } from '@switchboard/config';
import { createWorkerDeps } from '../../apps/worker/src/deps';
import { startRunner } from '../../apps/worker/src/runner';

// The production worker (same deps, same processors) as a separate process for crash tests,
// with recovery timings shortened so that a SIGKILLed worker's jobs come back in seconds.
async function main(): Promise<void> {
  const deps = createWorkerDeps(loadConfigOrExit());
  const runner = await startRunner(deps, {
    metricsPort: null,
    reconcileIntervalMs: 500,
    reconcileGraceMs: 2000,
    lockDurationMs: 3000,
    stalledIntervalMs: 1000,
  });
  process.stdout.write('worker ready\n');
  process.on('SIGTERM', () => {
    void runner
      .close(5000)
      .then(() => deps.close())
      .then(() => process.exit(0));
  });
}

void main();
