import { execFileSync } from 'node:child_process';
import path from 'node:path';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import type { PartResult } from './part';
import { useBuiltServices } from './harness/stack';
import { PARTS } from './parts';

// npm run chaos [-- PART ...]: runs the named parts of the chaos suite (all of them without
// a name), prints one table of figures per part on stdout, and exits 1 when any part found
// a problem. Each part gets its own database (cloned from a template migrated here) and its
// own Redis prefix, like a test file; the fault scenarios run on private servers of their own
// (chaos/harness/stack.ts).
const log = (line: string) => process.stderr.write(`${line}\n`);
const print = console.log.bind(console);
// What libraries print on their own (knex's pool reports a lost connection with console.log
// during an outage) goes to stderr with the progress: stdout is the tables only.
console.log = console.error.bind(console);

async function main(): Promise<number> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !PARTS[n]);
  if (unknown.length) {
    log(`unknown part: ${unknown.join(', ')}\nusage: npm run chaos [-- PART ...], PART one of:`);
    for (const [name, part] of Object.entries(PARTS)) log(`  ${name}: ${part.description}`);
    return 2;
  }
  const chosen = names.length ? names : Object.keys(PARTS);
  // The API and the worker run as deployed: compiled (`npm run build -- services`, a few
  // seconds), started with `node` and no TypeScript loader.
  log('» building the services (npm run build -- services)');
  execFileSync('npm', ['run', '--silent', 'build', '--', 'services'], {
    cwd: path.resolve(__dirname, '..'),
    stdio: ['ignore', 2, 'inherit'], // stdout is the tables only
  });
  useBuiltServices();
  await globalSetup();
  const results: Array<[string, PartResult]> = [];
  try {
    for (const name of chosen) {
      log(`» chaos part "${name}": ${PARTS[name]?.description}`);
      const started = Date.now();
      try {
        results.push([name, await (PARTS[name] as (typeof PARTS)[string]).run({ log })]);
      } catch (err) {
        results.push([
          name,
          { figures: [], problems: [`the part failed: ${(err as Error).stack}`] },
        ]);
      }
      log(`  "${name}" took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    await globalTeardown();
  }
  let failed = 0;
  for (const [name, result] of results) {
    const ok = result.problems.length === 0;
    if (!ok) failed++;
    const width = Math.max(10, ...result.figures.map(([k]) => k.length));
    print(`\n${name}: ${ok ? 'green' : `${result.problems.length} problem(s)`}`);
    for (const [k, v] of result.figures) print(`  ${k.padEnd(width)}  ${v}`);
    for (const p of result.problems.slice(0, 20)) print(`  ✗ ${p}`);
    if (result.problems.length > 20) print(`  … and ${result.problems.length - 20} more`);
  }
  print(`\nchaos: ${results.length - failed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`chaos: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  },
);
