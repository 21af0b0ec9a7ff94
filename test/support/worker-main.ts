import { loadConfigOrExit } from '@switchboard/config';
import { startTracing } from '@switchboard/telemetry';
import { createWorkerDeps } from '../../apps/worker/src/deps';
import type { ProvisioningProvider } from '../../apps/worker/src/provisioning';
import {
  SimulatorProvisioningProvider,
  type ProvisioningOperation,
} from '../../apps/worker/src/provisioning/simulator';
import { startRunner } from '../../apps/worker/src/runner';

/**
 * The simulator, except that `held` never returns: the process writes
 * `provisioning held in <operation>` to stdout when it is reached and waits there until it
 * is killed. A crash test's SIGKILL then lands inside that call on a machine of any speed.
 */
function holdingProvider(speed: number, held: ProvisioningOperation): ProvisioningProvider {
  const simulator = new SimulatorProvisioningProvider(speed);
  const hold = (): Promise<never> => {
    process.stdout.write(`provisioning held in ${held}\n`);
    return new Promise<never>(() => undefined);
  };
  return {
    name: simulator.name,
    buyNumber: (req) => (held === 'buyNumber' ? hold() : simulator.buyNumber(req)),
    createAssistant: (req) =>
      held === 'createAssistant' ? hold() : simulator.createAssistant(req),
    close: () => simulator.close(),
  };
}

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
    // Several times a whole simulated provisioning (about 1 s), so a killed attempt's
    // receptionist comes back in seconds and a live one is never taken over.
    provisioning: {
      leaseMs: 8_000,
      // TEST_PROVISIONING_HOLD=buyNumber or createAssistant: that call never returns.
      ...(process.env.TEST_PROVISIONING_HOLD
        ? {
            provider: holdingProvider(
              config.simulatorSpeed,
              process.env.TEST_PROVISIONING_HOLD as ProvisioningOperation,
            ),
          }
        : {}),
    },
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
