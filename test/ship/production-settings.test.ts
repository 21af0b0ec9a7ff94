import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareEnv } from '../support/api-process';
import { API_BUNDLE, WORKER_BUNDLE } from '../support/bundles';
import { killOnExit } from '../support/children';
import { testEnv } from '../support/env';

// WEBHOOK_ALLOW_PRIVATE_TARGETS is a development setting (docs/configuration.md): the
// compiled API and worker started with NODE_ENV=production and the flag on stop at boot with
// one line naming it, before they connect to anything.
const cwd = mkdtempSync(join(tmpdir(), 'sb-prod-')); // no .env here: only what the test gives
const children: ChildProcess[] = [];
afterAll(() => {
  // A process that did start (the refusal missing) is stopped here, not left running.
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

function start(bundle: string, env: Record<string, string>) {
  const proc = spawn(process.execPath, [bundle], {
    cwd,
    env: {
      ...bareEnv(),
      ...testEnv(),
      // Nothing to reach: a process that did start would touch no shared server.
      DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none',
      REDIS_URL: 'redis://127.0.0.1:9',
      PORT: '0',
      METRICS_PORT: '0',
      API_METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  killOnExit(proc);
  children.push(proc);
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    proc.once('exit', (code) => resolve({ code, stderr })),
  );
}

it.each([
  ['API', API_BUNDLE],
  ['worker', WORKER_BUNDLE],
])(
  'the compiled %s refuses WEBHOOK_ALLOW_PRIVATE_TARGETS=true under NODE_ENV=production',
  async (_, bundle) => {
    const { code, stderr } = await start(bundle, {
      NODE_ENV: 'production',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      'switchboard: configuration error: WEBHOOK_ALLOW_PRIVATE_TARGETS=true is refused with ' +
        'NODE_ENV=production: it lets webhooks reach loopback, private and cloud metadata ' +
        'addresses (development only); unset it\n',
    );
  },
  60_000,
);
