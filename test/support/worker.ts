import { createLogger } from '@switchboard/logger';
import { createWorkerDeps, type WorkerDeps } from '../../apps/worker/src/deps';
import { startRunner, type Runner, type RunnerOptions } from '../../apps/worker/src/runner';
import type { TestContext } from './context';

export interface TestWorker {
  deps: WorkerDeps;
  runner: Runner;
  close(): Promise<void>;
}

/**
 * The real worker (relay, fan-out, delivery, reconciler) in this process, on the test
 * file's database and Redis prefix. Timings are shortened so recovery paths run in seconds.
 */
export async function startTestWorker(
  ctx: TestContext,
  opts: { webhookCa?: string; runner?: RunnerOptions; config?: TestContext['config'] } = {},
): Promise<TestWorker> {
  const deps = createWorkerDeps(opts.config ?? ctx.config, {
    logger: createLogger('worker', 'silent'),
    webhookCa: opts.webhookCa,
  });
  const runner = await startRunner(deps, {
    metricsPort: null,
    reconcileIntervalMs: 250,
    reconcileGraceMs: 1500,
    lockDurationMs: 5000,
    stalledIntervalMs: 1000,
    ...opts.runner,
  });
  return {
    deps,
    runner,
    async close() {
      await runner.close(5000);
      await deps.close();
    },
  };
}

/**
 * Waits until `check` returns a value (not undefined/false), re-checking every `intervalMs`
 * up to `timeoutMs`; then fails with `what`. Bounded: never an open-ended loop.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 15_000, intervalMs = 25 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
