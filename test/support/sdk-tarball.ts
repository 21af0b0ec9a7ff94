import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './bundles';
import { runId } from './env';

const run = promisify(execFile);
const WAIT_STEP_MS = 100;
/** A bound that only catches a packer that died: `npm pack` takes 5–25 s here. */
const WAIT_LIMIT_MS = 300_000;

/** Where this run's SDK tarball lives; the global teardown removes it. */
export const sdkPackDir = (): string => join(tmpdir(), `sb-sdk-${runId()}`);

/**
 * The SDK as `npm pack` makes it (its prepack builds it), packed once per run: the first
 * test file to ask packs it, and every other file (in any jest worker) waits for that
 * tarball. Files that use it read it and never change it. Resolves with its path.
 */
export async function sdkTarball(): Promise<string> {
  const dir = sdkPackDir();
  const done = join(dir, 'tarball.json');
  const failed = join(dir, 'failed.txt');
  let mine = false;
  try {
    mkdirSync(dir); // atomic: exactly one caller of the run creates it and packs
    mine = true;
  } catch {
    // Another file is packing, or has packed.
  }
  if (mine) {
    try {
      const packed = await run(
        'npm',
        ['pack', '-w', '@switchboard/sdk', '--pack-destination', dir, '--json'],
        { cwd: ROOT },
      );
      const [first] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{
        filename: string;
      }>;
      if (!first) throw new Error('npm pack named no tarball');
      writeFileSync(done, JSON.stringify({ file: join(dir, first.filename) }));
    } catch (err) {
      writeFileSync(failed, String(err));
      throw err;
    }
  }
  for (let waited = 0; waited <= WAIT_LIMIT_MS; waited += WAIT_STEP_MS) {
    if (existsSync(done)) return (JSON.parse(readFileSync(done, 'utf8')) as { file: string }).file;
    if (existsSync(failed)) throw new Error(`npm pack failed: ${readFileSync(failed, 'utf8')}`);
    await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
  }
  throw new Error(`no SDK tarball in ${dir} after ${WAIT_LIMIT_MS} ms`);
}

/** For the global teardown. */
export function removeSdkTarball(): void {
  rmSync(sdkPackDir(), { recursive: true, force: true });
}
