import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Config } from '@switchboard/config';
import { TEST_WORKER_BUNDLE, WORKER_BUNDLE } from './bundles';
import { exited, killOnExit } from './children';
import { redisEnv, testEnv } from './env';

const ROOT = path.resolve(__dirname, '..', '..');

export interface WorkerProcess {
  process: ChildProcess;
  /** SIGTERM (the worker drains), SIGKILL after 5 s. */
  stop(): Promise<void>;
  /** SIGKILL at once (a crash, or a teardown that need not drain). */
  kill(): Promise<void>;
  /** The last 8,000 characters it wrote (stdout and stderr): for a failure's message. */
  output(): string;
}

/**
 * The worker as a separate process, compiled by the global setup (test/support/bundles.ts):
 * by default the test worker (test/support/worker-main.ts: same deps, same processors,
 * shortened recovery timings), or with `entry: 'production'` (or `'built'`, the same) the
 * production entry and timings (`apps/worker/dist/main.js`, what `npm run start:worker`
 * runs), on `config`'s database, Redis (one server or a cluster) and prefix. `env` adds
 * variables (e.g. NODE_EXTRA_CA_CERTS for a test receiver). Resolves once the worker said it
 * is ready; killed when this process exits.
 */
export async function startWorkerProcess(
  config: Config,
  env: Record<string, string> = {},
  opts: { entry?: 'production' | 'built' | 'test' } = {},
): Promise<WorkerProcess> {
  // `production` and `built`: apps/worker/src/main.ts itself or its compiled bundle, with
  // its default timings (it says it is ready in its log, at level info; /metrics on a free
  // port).
  const production = opts.entry === 'production' || opts.entry === 'built';
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', production ? WORKER_BUNDLE : TEST_WORKER_BUNDLE],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...testEnv({
          DATABASE_URL: config.databaseUrl,
          QUEUE_PREFIX: config.queuePrefix,
          ...redisEnv(config.redis),
          ...(production ? { LOG_LEVEL: 'info', METRICS_PORT: '0' } : {}),
          ...env,
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const undo = killOnExit(child);
  let output = '';
  const keep = (c: Buffer) => (output = (output + c.toString()).slice(-8000));
  child.stderr?.on('data', keep);
  child.stdout?.on('data', keep);
  await new Promise<void>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`worker ${why}:\n${output}`));
    };
    const timer = setTimeout(() => fail('not ready within 60 s'), 60_000);
    child.once('error', (err) => fail(err.message));
    child.once('exit', (code) => fail(`exited early (${code})`));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('worker ready')) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve();
      }
    });
  });
  return {
    process: child,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited(child);
      clearTimeout(timer);
      undo();
    },
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
      undo();
    },
    output: () => output,
  };
}
