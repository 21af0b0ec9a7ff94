import { execFile } from 'node:child_process';
import { join } from 'node:path';

// The SDK's types are generated from the served document and checked in; a route, schema or
// event that changed without `npm run sdk:generate` fails here. The generator runs as its own
// process (openapi-typescript is an ES module, which this jest setup cannot load).
const ROOT = join(__dirname, '../..');

it('packages/sdk/src/generated/openapi.ts is what npm run sdk:generate makes now', async () => {
  const result = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/sdk-generate.ts', '--check'],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent' } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
  expect(result).toEqual({ code: 0, output: expect.stringContaining('is up to date') });
}, 60_000);
