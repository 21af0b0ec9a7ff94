/**
 * `npm run build`: compiles the services and the SDK to JavaScript.
 *
 * Services (API, worker, CLI, migrations): esbuild bundles each entry point with the workspace
 * packages it imports (`@switchboard/*`, whose sources are TypeScript) into one CommonJS file
 * next to its sources (`apps/api/dist/server.js`, ...). Every other package stays an
 * `require` of node_modules, so the output runs with the production dependencies that
 * `npm ci --omit=dev` installs, and nothing else. Type checking is `npm run typecheck`'s job.
 *
 * SDK: `tsup` in packages/sdk (ESM, CommonJS and declaration files for each).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';

const ROOT = resolve(__dirname, '..');

/** Entry point → output file, both relative to the repository root. */
export const SERVICES: Record<string, string> = {
  'apps/api/src/server.ts': 'apps/api/dist/server.js',
  'apps/worker/src/main.ts': 'apps/worker/dist/main.js',
  'apps/cli/src/main.ts': 'apps/cli/dist/main.js',
  'packages/db/src/migrate-cli.ts': 'packages/db/dist/migrate-cli.js',
};

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
async function buildServices(outRoot: string): Promise<void> {
  for (const out of new Set(Object.values(SERVICES).map((f) => resolve(outRoot, f, '..')))) {
    rmSync(out, { recursive: true, force: true });
  }
  await Promise.all(
    Object.entries(SERVICES).map(([entry, outfile]) =>
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

// `npm run build [-- services|sdk] [--out <dir>]`
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--out');
  const outRoot = at >= 0 ? resolve(args.splice(at, 2)[1] ?? '') : ROOT;
  const only = args[0];
  if (only !== undefined && only !== 'services' && only !== 'sdk') {
    throw new Error(`unknown part "${only}": services or sdk`);
  }
  if (only !== 'sdk') await buildServices(outRoot);
  if (only !== 'services') {
    execFileSync('npm', ['run', '--silent', 'build', '-w', '@switchboard/sdk'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`switchboard: build failed: ${(err as Error).message}\n`);
  process.exit(1);
});
