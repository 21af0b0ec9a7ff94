import { join } from 'node:path';
import { buildServices, SERVICES } from '../../scripts/bundle';
import { ROOT } from './children';
import { step } from './progress';

/**
 * What a benchmark starts: the services as they ship (`npm run build`'s bundles under plain
 * `node`, as `npm start` and the Docker image run them), and its bare references bundled the
 * same way, so that both sides of a ratio run as compiled JavaScript. Under tsx every
 * function of the sources carries its loader's naming helper and the API spent about 15 %
 * more CPU per request (docs/benchmarks/api.md, "What ships, measured"). BENCH_FROM_SOURCES=1
 * runs the TypeScript sources under tsx instead (a profile then names each source file).
 */
export const FROM_SOURCES = process.env.BENCH_FROM_SOURCES === '1';

const sourceOf = (output: string): string => {
  const entry = Object.entries(SERVICES).find(([, out]) => out === output)?.[0];
  if (!entry) throw new Error(`no service compiles to ${output}`);
  return entry;
};

/** The file to start for a service, e.g. `apps/api/dist/server.js` (or its source). */
export function serviceEntry(
  output: 'apps/api/dist/server.js' | 'apps/worker/dist/main.js',
): string {
  return FROM_SOURCES ? sourceOf(output) : output;
}

/** Where a bench entry's bundle goes: `bench/compare/bare-server.ts` → `bench/dist/compare-bare-server.js`. */
function bundleOf(source: string): string {
  return join(
    'bench',
    'dist',
    `${source
      .replace(/^bench\//, '')
      .replace(/\.ts$/, '')
      .replaceAll('/', '-')}.js`,
  );
}

/**
 * Compiles the services and the given bench entries (unless BENCH_FROM_SOURCES=1) and
 * returns, for each bench entry, the file to start.
 */
export async function compileForBench(
  benchEntries: readonly string[] = [],
): Promise<Record<string, string>> {
  const files = Object.fromEntries(
    benchEntries.map((source) => [source, FROM_SOURCES ? source : bundleOf(source)]),
  );
  if (!FROM_SOURCES) {
    await step('compiling the services and the bare references (npm run build)', () =>
      buildServices(ROOT, { ...SERVICES, ...files }),
    );
  }
  return files;
}
