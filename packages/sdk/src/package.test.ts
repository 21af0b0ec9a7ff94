import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

// The SDK ships alone: no dependencies, and nothing imported but its own files and Node's
// built-ins (fetch is global). Test files and src/testing are not shipped code.
const SRC = __dirname;

function shippedFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : shippedFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

it('has no runtime dependencies', () => {
  const pkg = JSON.parse(readFileSync(join(SRC, '../package.json'), 'utf8'));
  expect(pkg.dependencies ?? {}).toEqual({});
});

it('imports only its own files and node: built-ins', () => {
  const files = shippedFiles(SRC);
  expect(files.length).toBeGreaterThan(5);
  for (const file of files) {
    const specifiers = [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    const foreign = specifiers.filter(
      (s) => !s?.startsWith('./') && !s?.startsWith('../') && !s?.startsWith('node:'),
    );
    expect([relative(SRC, file), foreign]).toEqual([relative(SRC, file), []]);
  }
});
