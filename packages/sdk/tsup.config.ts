import { defineConfig } from 'tsup';

// `npm run build -w @switchboard/sdk` (and `npm pack`, through prepack): ESM (index.mjs) and
// CommonJS (index.js), each with its declaration file, for Node 20 and newer; the same for
// `@switchboard/sdk/types` (types.*: the API's types alone, no runtime code).
export default defineConfig({
  entry: ['src/index.ts', 'src/types.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  tsconfig: 'tsconfig.build.json',
});
