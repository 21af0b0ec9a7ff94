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
import { resolve } from 'node:path';
import { buildServices } from './bundle';

const ROOT = resolve(__dirname, '..');

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
