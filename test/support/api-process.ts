import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import type { Config } from '@switchboard/config';
import { testEnv } from './env';

const ROOT = resolve(__dirname, '..', '..');
const TSX_CLI = resolve(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

/** A TCP port free on 127.0.0.1 right now (bind an ephemeral port, then close it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export interface ApiProcess {
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * A real API process (`apps/api/src/server.ts` under tsx) on the test file's database and
 * Redis prefix, in its own process group so that stopping it also stops tsx's child.
 */
export async function startApiProcess(config: Config): Promise<ApiProcess> {
  const port = await freePort();
  const env = {
    ...process.env,
    ...testEnv({
      DATABASE_URL: config.databaseUrl,
      REDIS_URL: config.redisUrl,
      QUEUE_PREFIX: config.queuePrefix,
      PORT: String(port),
      LOG_LEVEL: 'warn',
    }),
  };
  const proc: ChildProcess = spawn(process.execPath, [TSX_CLI, 'apps/api/src/server.ts'], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const signal = (s: NodeJS.Signals) => {
    try {
      if (proc.pid) process.kill(-proc.pid, s);
    } catch {
      // Already gone.
    }
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`API process exited early:\n${stderr}`);
    const up = await fetch(`${baseUrl}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      signal('SIGKILL');
      throw new Error(`API process not ready within 30 s:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    baseUrl,
    async stop() {
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      signal('SIGKILL'); // whatever tsx left of the group
    },
  };
}
