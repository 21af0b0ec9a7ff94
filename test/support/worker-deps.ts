import { createLogger } from '@switchboard/logger';
import { createWorkerDeps, type WorkerDeps } from '../../apps/worker/src/deps';
import { createTestContext, type TestContext } from './context';

/**
 * A worker's dependencies on `config` (connections, stores, metrics) with no component
 * started, logging nothing: for a test that drives the worker's parts itself. Apart from
 * ./worker.ts, which loads the whole worker.
 */
export const quietWorkerDeps = (config: TestContext['config']): WorkerDeps =>
  createWorkerDeps(config, { logger: createLogger('worker', 'silent') });

/**
 * A test file's context and quiet worker dependencies, made before its tests and closed
 * after them (jest's beforeAll and afterAll, registered here): read `ctx` and `deps` inside
 * the tests, not at the file's top level.
 */
export function quietWorkerFile(): { readonly ctx: TestContext; readonly deps: WorkerDeps } {
  let ctx: TestContext | undefined;
  let deps: WorkerDeps | undefined;
  beforeAll(async () => {
    ctx = await createTestContext();
    deps = quietWorkerDeps(ctx.config);
  });
  afterAll(async () => {
    await deps?.close();
    await ctx?.close();
  });
  const made = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('read in a test, after beforeAll');
    return value;
  };
  return {
    get ctx() {
      return made(ctx);
    },
    get deps() {
      return made(deps);
    },
  };
}
