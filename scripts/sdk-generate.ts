import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { servedOpenApiDocument } from './openapi/served-document';
import { renderSdkTypes, SDK_TYPES_FILE } from './openapi/sdk-types';

// Regenerates packages/sdk/src/generated/openapi.ts from the document createApi serves.
//
//   npm run sdk:generate            # rewrite the file
//   npm run sdk:generate -- --check # exit 1 if the checked-in file is stale
async function main(): Promise<void> {
  const text = await renderSdkTypes(await servedOpenApiDocument());
  const name = relative(process.cwd(), SDK_TYPES_FILE);
  let current = '';
  try {
    current = readFileSync(SDK_TYPES_FILE, 'utf8');
  } catch {
    // Not generated yet.
  }
  if (process.argv.includes('--check')) {
    if (current !== text) {
      process.stderr.write(`${name} is stale: run npm run sdk:generate\n`);
      process.exit(1);
    }
    process.stdout.write(`${name} is up to date\n`);
    return;
  }
  if (current === text) {
    process.stdout.write(`${name} is up to date\n`);
    return;
  }
  writeFileSync(SDK_TYPES_FILE, text);
  process.stdout.write(`wrote ${name}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`sdk:generate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
