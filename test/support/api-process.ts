import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import type { Config } from '@switchboard/config';
import { API_BUNDLE } from './bundles';
import { killOnExit } from './children';
import { redisEnv, testEnv } from './env';
import { waitFor } from './wait';

export const ROOT = resolve(__dirname, '..', '..');
export const TSX_CLI = resolve(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

/**
 * Ports handed out by {@link freePort}: a block of its own for each jest worker, below the
 * kernel's ephemeral range (32768–60999 by default). A port from that range, closed again,
 * could be handed to another file's process before the child told to listen on it did, and
 * that other process would then answer this file's requests (and vanish when its file ended).
 * Here no two jest workers share a port and the kernel never picks one for a connection.
 */
const PORT_BLOCK = 2_000;
// Six blocks fit under 32768 (20000–31999); jest runs three workers (jest.config.ts).
const FIRST_PORT = 20_000 + ((Number(process.env.JEST_WORKER_ID ?? 1) - 1) % 6) * PORT_BLOCK;
let nextPort = Math.floor(Math.random() * PORT_BLOCK);

/** Binds and closes `port` on 127.0.0.1: false when something holds it. */
async function bindable(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((r) => {
    server.once('error', () => r(false));
    server.listen(port, '127.0.0.1', () => r(true));
  });
  if (bound) await new Promise((r) => server.close(r));
  return bound;
}

/** A TCP port free on 127.0.0.1 right now, from this jest worker's own block. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < PORT_BLOCK; tries++) {
    const port = FIRST_PORT + (nextPort++ % PORT_BLOCK);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${FIRST_PORT}–${FIRST_PORT + PORT_BLOCK - 1}`);
}

/**
 * The process environment without any Switchboard setting: what an operator's shell looks
 * like before anything is exported (a child then sees only what the test gives it).
 */
export function bareEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(DATABASE_URL|REDIS_|PORT|(API_)?METRICS_|INGEST_|CURSOR_|SECRET_|WEBHOOK_)/.test(name))
      continue;
    if (/^(WORKER_|QUEUE_|SIMULATOR_|SHUTDOWN_|LOG_LEVEL|HTTP_|OTEL_)/.test(name)) continue;
    env[name] = value;
  }
  return env;
}

export interface ApiProcess {
  baseUrl: string;
  pid: number;
  /** Sends a signal to the API process itself (not tsx's wrapper): e.g. SIGTERM. */
  signal(s: NodeJS.Signals): void;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stderr(): string;
  /** Everything the process wrote to stdout (its log), when started with `stdout: true`. */
  stdout(): string;
  stop(): Promise<void>;
}

export interface ApiProcessOptions {
  /** Extra variables over the test environment (e.g. SHUTDOWN_GRACE_MS). */
  env?: Record<string, string>;
  /** Run from this directory with exactly `env` (no test environment): a fresh checkout. */
  cwd?: string;
  /**
   * `apps/api/dist/server.js` under `cwd` (a copy of the repository's layout, as the Docker
   * image's test makes) instead of the bundle the global setup compiled.
   */
  built?: boolean;
  /** Keep what the process writes to stdout (its log lines), whole; else it is ignored. */
  stdout?: boolean;
}

/**
 * A real API process (`apps/api/src/server.ts`, compiled by the global setup) on the test
 * file's database and Redis prefix. Started by `node` itself, as `npm run start:api` does, so
 * the pid is the API and signals reach it directly.
 */
export async function startApiProcess(
  config: Pick<Config, 'databaseUrl' | 'redis' | 'queuePrefix'> | null,
  opts: ApiProcessOptions = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const env = opts.cwd
    ? // Any free metrics port, so API processes of parallel tests never collide on 9465.
      { ...bareEnv(), API_METRICS_PORT: '0', ...opts.env, PORT: String(port) }
    : {
        ...process.env,
        ...testEnv({
          DATABASE_URL: config?.databaseUrl ?? '',
          ...(config ? redisEnv(config.redis) : {}),
          QUEUE_PREFIX: config?.queuePrefix ?? '',
          PORT: String(port),
          API_METRICS_PORT: '0',
          LOG_LEVEL: 'warn',
          SHUTDOWN_GRACE_MS: '200',
          ...opts.env,
        }),
      };
  const proc: ChildProcess = spawn(
    process.execPath,
    [
      '--enable-source-maps',
      opts.built
        ? resolve(opts.cwd ?? ROOT, 'apps/api/dist/server.js')
        : // What the global setup compiled from this run's sources (test/support/bundles.ts).
          API_BUNDLE,
    ],
    { cwd: opts.cwd ?? ROOT, env, stdio: ['ignore', opts.stdout ? 'pipe' : 'ignore', 'pipe'] },
  );
  const undo = killOnExit(proc);
  let stderr = '';
  proc.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  const out: Buffer[] = [];
  proc.stdout?.on('data', (c: Buffer) => out.push(c));
  // 'close': the process has exited and its stdout is read to the end.
  const exited = new Promise<number | null>((r) => proc.once('close', (code) => r(code)));
  const signal = (s: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(s);
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    'the API process to answer /healthz',
    async () => {
      if (proc.exitCode !== null) throw new Error(`API process exited early:\n${stderr}`);
      return fetch(`${baseUrl}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    },
    // Only a hang detector: a busy machine can take many seconds to start a process.
    { timeoutMs: 60_000, intervalMs: 100 },
  ).catch((err: unknown) => {
    signal('SIGKILL');
    throw new Error(`${(err as Error).message}:\n${stderr}`);
  });
  return {
    baseUrl,
    pid: proc.pid as number,
    signal,
    exited,
    stderr: () => stderr,
    stdout: () => Buffer.concat(out).toString('utf8'),
    async stop() {
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
      undo();
    },
  };
}
