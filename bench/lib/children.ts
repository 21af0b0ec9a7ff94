import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { httpGet } from './http';
import { log, sleep } from './progress';

/** The repository root (bench/lib/../..). */
export const ROOT = resolve(__dirname, '..', '..');
const TSX_CLI = resolve(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const TAIL_BYTES = 16_384;

export interface Child {
  name: string;
  proc: ChildProcess;
  /** The last lines the child wrote (stdout and stderr), for error messages. */
  tail(): string;
  /** Resolves with the exit code (or signal name) when the process exits. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

const running = new Set<Child>();

/** Signals the child's whole process group (tsx runs the script in a grandchild). */
function signalGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // Already gone.
  }
}

function groupAlive(proc: ChildProcess): boolean {
  if (proc.pid === undefined) return false;
  try {
    process.kill(-proc.pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs a TypeScript file with tsx (or a compiled `.js` file with plain node) as a child
 * process in its own process group, so that stopping it also stops the process tsx starts
 * underneath.
 */
export function startTsChild(name: string, script: string, env: NodeJS.ProcessEnv): Child {
  // Compiled: as `npm start` runs it (source maps for stack traces).
  const args = script.endsWith('.js') ? ['--enable-source-maps', script] : [TSX_CLI, script];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<string>((done) => {
    proc.on('exit', (code, signal) => {
      running.delete(child);
      done(signal ?? String(code));
    });
    proc.on('error', (err) => {
      running.delete(child);
      keep(Buffer.from(String(err)));
      done('spawn error');
    });
  });
  const child: Child = {
    name,
    proc,
    tail: () => tail.trim(),
    exited,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        signalGroup(proc, 'SIGTERM');
        const gone = await Promise.race([exited.then(() => true), sleep(8000).then(() => false)]);
        if (!gone) log(`  ${name} did not stop within 8 s: killing it`);
      }
      // tsx may exit before the script it runs has finished its graceful stop: give the
      // group a moment, then whatever is left of it (a grandchild that outlived tsx) goes too.
      for (let i = 0; i < 50 && groupAlive(proc); i++) await sleep(100);
      signalGroup(proc, 'SIGKILL');
      running.delete(child);
    },
  };
  running.add(child);
  return child;
}

/** Polls `url` until it answers 200; fails if the child exits or the deadline passes. */
export async function waitForHttp(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  void child.exited.then(() => {
    dead = true;
  });
  while (Date.now() < deadline) {
    if (dead) throw new Error(`${child.name} exited before it was ready:\n${child.tail()}`);
    try {
      const res = await httpGet(url, {}, 2000);
      if (res.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(200);
  }
  throw new Error(`${child.name} was not ready within ${timeoutMs / 1000} s:\n${child.tail()}`);
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map((c) => c.stop()));
}

let installed = false;

/**
 * Children die with the benchmark: on a normal exit, an error, Ctrl-C or SIGTERM.
 * `onSignal` lets the benchmark stop its own work (e.g. a running autocannon) first; when it
 * returns a promise (its own cleanup: a database to drop, Redis keys to delete), the process
 * exits once both it and the children's stop have settled.
 */
export function installChildCleanup(onSignal?: () => void | Promise<void>): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => {
    for (const c of running) signalGroup(c.proc, 'SIGKILL');
  });
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // `on`, not `once`: Ctrl-C reaches this process twice (from the terminal and relayed by
    // the tsx CLI), and a second, unhandled SIGINT would kill it in the middle of cleaning up.
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log(`\n${signal}: stopping child processes`);
      // Called at once, before the children are signalled (it may stop what loads them).
      let own: Promise<void>;
      try {
        own = Promise.resolve(onSignal?.()).catch(() => undefined);
      } catch {
        own = Promise.resolve();
      }
      void Promise.all([stopAllChildren(), own]).finally(() =>
        process.exit(signal === 'SIGINT' ? 130 : 143),
      );
    });
  }
}
