import path from 'node:path';
import { SERVICES } from '../../scripts/services';

// What the global setup (test/support/global-setup.ts) compiles before any test runs: the
// services as `npm run build` makes them, and the test worker. A test starts these files with
// plain `node`, never a stale build: every run compiles them from its own sources.
export const ROOT = path.resolve(__dirname, '..', '..');

/** Entry → output, relative to the repository root: the services and the test worker. */
export const TEST_BUNDLES: Record<string, string> = {
  ...SERVICES,
  'test/support/worker-main.ts': 'test/support/dist/worker-main.js',
};

const bundle = (entry: string) => path.join(ROOT, TEST_BUNDLES[entry] as string);
export const API_BUNDLE = bundle('apps/api/src/server.ts');
export const WORKER_BUNDLE = bundle('apps/worker/src/main.ts');
export const CLI_BUNDLE = bundle('apps/cli/src/main.ts');
export const TEST_WORKER_BUNDLE = bundle('test/support/worker-main.ts');
