import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from './children';

/**
 * Writes one run's figures to `bench/.results/<name>-<start, to the second>.json`
 * (git-ignored), the record the tables of docs/BENCHMARKS.md and
 * docs/benchmarks/ are copied from, and says where.
 */
export function saveResult(
  name: string,
  startedAt: Date,
  result: unknown,
  log: (line: string) => void,
): string {
  const dir = join(ROOT, 'bench', '.results');
  mkdirSync(dir, { recursive: true });
  const stamp = startedAt
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const file = join(dir, `${name}-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`\nresults written to ${relative(ROOT, file)}`);
  return file;
}
