import { loadConfigOrExit } from '@switchboard/config';
import { startTracing } from '@switchboard/telemetry';
import { createWorkerDeps } from '../../apps/worker/src/deps';
import { startRunner } from '../../apps/worker/src/runner';

// The production worker (same deps, same processors) as a separate process for crash tests,
// with recovery timings shortened so that a SIGKILLed worker's jobs come back in seconds.
async function main(): Promise<void> {
  const config = loadConfigOrExit('worker');
  const tracing = startTracing(config.tracing, 'switchboard-worker');
  const deps = createWorkerDeps(config);
  const runner = await startRunner(deps, {
    metricsPort: null,
    reconcileIntervalMs: 500,
    reconcileGraceMs: 2000,
    lockDurationMs: 3000,
    stalledIntervalMs: 1000,
    // Longer than a slowed-down simulated provisioning (SIMULATOR_SPEED < 1 in crash tests);
    // a test that slows it less may shorten it (TEST_PROVISIONING_LEASE_MS).
    provisioning: { leaseMs: Number(process.env.TEST_PROVISIONING_LEASE_MS) || 8_000 },
    smsStaleSendingMs: 5000,
    // A test may shorten a parked delivery's safety delay (30 s), which a wake-up lost to a
    // SIGKILL leaves the delivery waiting out (TEST_PARKED_DELAY_MS).
    parkedDelayMs: Number(process.env.TEST_PARKED_DELAY_MS) || undefined,
    campaignPollMs: 250,
    // Small import batches let a crash test kill the worker in the middle of a file.
    leadImportBatchSize: Number(process.env.TEST_IMPORT_BATCH_SIZE) || undefined,
  });
  process.stdout.write('worker ready\n');
  process.on('SIGTERM', () => {
    void runner
      .close(5000)
      .then(() => deps.close())
      .then(() => tracing?.shutdown())
      .then(() => process.exit(0));
  });
}

void main();
