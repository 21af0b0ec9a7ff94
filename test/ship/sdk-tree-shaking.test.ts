import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { sdkTarball } from '../support/sdk-tarball';

// The packed SDK in a consumer's bundle (esbuild, as a web or serverless app would bundle it):
// its package.json declares its shipped files free of side effects, so an import left unused
// costs nothing, while the Node version check of src/node-check.ts (marked as a side effect,
// so the SDK's own build keeps it) still runs in a bundle that uses the SDK.
const run = promisify(execFile);
const PROJECT = mkdtempSync(join(tmpdir(), 'sb-bundle-'));

beforeAll(async () => {
  await run('tar', ['-xzf', await sdkTarball(), '-C', PROJECT]);
  mkdirSync(join(PROJECT, 'node_modules', '@switchboard'), { recursive: true });
  renameSync(join(PROJECT, 'package'), join(PROJECT, 'node_modules', '@switchboard', 'sdk'));
}, 120_000);
afterAll(() => rmSync(PROJECT, { recursive: true, force: true }));

/** The bundle esbuild makes of a consumer module (ESM), as text. */
async function bundle(source: string): Promise<string> {
  const entry = join(PROJECT, `entry-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(entry, source);
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    absWorkingDir: PROJECT,
    logLevel: 'silent',
  });
  return out.outputFiles[0]?.text ?? '';
}

test('an SDK import left unused adds nothing to the bundle', async () => {
  const text = await bundle("import { Switchboard } from '@switchboard/sdk';\nexport {};\n");
  expect(text.trim()).toBe('');
});

test('a bundle using one function keeps the Node version check, not the client', async () => {
  const text = await bundle(
    "import { verifyWebhook } from '@switchboard/sdk';\nconsole.log(verifyWebhook);\n",
  );
  expect(text).toContain('needs Node.js 20 or newer');
  expect(text).toContain('verifyWebhook');
  expect(text).not.toMatch(/var Switchboard = class/);
});
