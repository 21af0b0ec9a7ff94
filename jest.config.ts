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
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  maxWorkers: 2,
  testTimeout: 30_000,
};

export default config;
