/** The services `npm run build` compiles (scripts/bundle.ts): entry point → output file, both
 * relative to the repository root. */
export const SERVICES: Record<string, string> = {
  'apps/api/src/server.ts': 'apps/api/dist/server.js',
  'apps/worker/src/main.ts': 'apps/worker/dist/main.js',
  'apps/cli/src/main.ts': 'apps/cli/dist/main.js',
  'packages/db/src/migrate-cli.ts': 'packages/db/dist/migrate-cli.js',
};
