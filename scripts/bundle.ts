/**
 * The services as one CommonJS file each: esbuild bundles an entry point with the workspace
 * packages it imports (`@switchboard/*`, whose sources are TypeScript) next to its sources
 * (`apps/api/dist/server.js`, ...). Every other package stays a `require` of node_modules, so
 * the output runs with the production dependencies that `npm ci --omit=dev` installs, and
 * nothing else. Used by `npm run build` (scripts/build.ts) and by the test suite's global
 * setup, which builds the services and the test worker before any test starts one.
 */
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { SERVICES } from './services';

export { SERVICES };

const ROOT = resolve(__dirname, '..');

/**
 * Bare imports stay `require`s of node_modules, except the workspace's own packages. npm
 * installs a package inside a workspace (`packages/events/node_modules/ajv`) when the root holds
 * another major of it, so each import is resolved from its importer as Node would, and a
 * nested one is required by its path relative to the output file (`npm ci` reproduces the
 * lock's layout, with or without devDependencies).
 */
function externalDependencies(outDir: string): Plugin {
  return {
    name: 'external-dependencies',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('@switchboard/') || args.path.startsWith('node:')) return;
        const parts = args.path.split('/');
        const name = parts.slice(0, args.path.startsWith('@') ? 2 : 1).join('/');
        const subpath = args.path.slice(name.length);
        for (let dir = args.resolveDir; dir.startsWith(ROOT); dir = dirname(dir)) {
          const candidate = join(dir, 'node_modules', name);
          if (!existsSync(candidate)) continue;
          if (dir === ROOT) break;
          return { path: `./${relative(outDir, candidate)}${subpath}`, external: true };
        }
        return { path: args.path, external: true };
      });
    },
  };
}

/**
 * `outRoot`: where the files go, in the repository's layout (the repository itself, or a
 * copy of its manifests and node_modules, as the Docker image and its test make).
 */
export async function buildServices(
  outRoot: string,
  entries: Record<string, string> = SERVICES,
): Promise<void> {
  for (const out of new Set(Object.values(entries).map((f) => resolve(outRoot, f, '..')))) {
    rmSync(out, { recursive: true, force: true });
  }
  await Promise.all(
    Object.entries(entries).map(([entry, outfile]) =>
      build({
        entryPoints: [resolve(ROOT, entry)],
        outfile: resolve(outRoot, outfile),
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node24',
        sourcemap: 'linked',
        logLevel: 'warning',
        plugins: [externalDependencies(dirname(resolve(ROOT, outfile)))],
      }),
    ),
  );
}
