/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

// Unit tests sit next to the code (*.test.ts); integration tests live under test/ folders.
// Every integration test file gets its own Postgres database (cloned from a migrated
// template in globalSetup) and its own Redis key prefix: see test/support/context.ts.
const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/packages', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // The SDK's package.json points at its build (dist/); inside the repository tests use its
  // sources, as the type check does (tsconfig.base.json "paths").
  moduleNameMapper: {
    '^@switchboard/sdk$': '<rootDir>/packages/sdk/src/index.ts',
    '^@switchboard/sdk/types$': '<rootDir>/packages/sdk/src/types.ts',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // The scaled-down chaos parts (test/chaos) hold wall-clock bounds (fast 503s, a recovery
  // window, a healthy endpoint served while a dead one hangs): they run in `npm run
  // chaos:quick` (SWITCHBOARD_CHAOS=1), not in `npm test`, whose every assertion holds on a
  // busy machine. The rules they check have their own tests in test/worker and test/api.
  testPathIgnorePatterns:
    process.env.SWITCHBOARD_CHAOS === '1' ? ['/node_modules/'] : ['/node_modules/', '/test/chaos/'],
  // Three files at a time on two cores: a file spends much of its time waiting (a lease, a
  // retry's delay, a child process, Chromium), and a third fills those waits (jest 264 s
  // against 339 s with two, quiet). Every file's API and worker processes share one
  // Postgres (100 connections by default): the tests' pools close a connection idle for 1 s
  // (test/support/env.ts), so a file holds what it uses, not all it ever opened. Decision
  // 0124 in docs/decisions has the figures.
  maxWorkers: 3,
  // Code under test runs in a vm context, where every lookup of a global goes through the
  // context's interceptor: csv-parse calls Math.max once per input byte, and a 20 MiB lead
  // import parsed 7 times slower than in plain Node (3.3 s against 0.45 s). Math passed into
  // each module's wrapper makes it a local. Only names no module redeclares with const/let
  // can go here (a module's own `const Buffer` would then be a syntax error).
  sandboxInjectedGlobals: ['Math'],
  // A bound that only catches a hang: a file that passes in 10 s on a quiet machine can take
  // several times that on a busy one, and no assertion of the suite depends on it.
  testTimeout: 60_000,
};

export default config;
