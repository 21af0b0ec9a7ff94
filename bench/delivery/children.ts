/**
 * Child processes of the delivery benchmark, started as `node [flags] <script>.js` (a compiled
 * service) or `node [flags] --import tsx <script>.ts` (not the tsx CLI): the script then runs in the very process we spawn, so a signal we send
 * reaches it, `--cpu-prof` profiles it, and its pid is the one whose CPU time we read.
 * Each child gets its own process group; every child is stopped when the benchmark exits,
 * fails or is interrupted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { log, sleep } from '../lib/progress';

export const ROOT = resolve(__dirname, '..', '..');
const TAIL_BYTES = 16_384;

export interface NodeChild {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** The last output (stdout and stderr) of the child, for error messages. */
  tail(): string;
  /** Resolves with the exit code or the signal's name. */
  exited: Promise<string>;
  /** SIGTERM, up to `graceMs` to exit on its own, then SIGKILL of its group. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<NodeChild>();

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export function startNodeChild(
  name: string,
  script: string,
  opts: {
    env: NodeJS.ProcessEnv;
    nodeArgs?: string[];
    ipc?: boolean;
    /** Every chunk of output (stdout and stderr), e.g. to count warnings. */
    onOutput?: (text: string) => void;
  },
): NodeChild {
  // A compiled `.js` file runs as `npm start` runs it.
  const loader = script.endsWith('.js') ? ['--enable-source-maps'] : ['--import', 'tsx'];
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...loader, script], {
    cwd: ROOT,
    env: opts.env,
    detached: true,
    stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  if (proc.pid === undefined) throw new Error(`could not start ${name}`);
  const pid = proc.pid;
  let tail = '';
  const keep = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-TAIL_BYTES);
    opts.onOutput?.(text);
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
  const child: NodeChild = {
    name,
    proc,
    pid,
    tail: () => tail.trim(),
    exited,
    async stop(graceMs = 15_000) {
      if (proc.exitCode === null && proc.signalCode === null) {
        signalGroup(pid, 'SIGTERM');
        const gone = await Promise.race([
          exited.then(() => true),
          sleep(graceMs).then(() => false),
        ]);
        if (!gone) log(`  ${name} did not stop within ${graceMs / 1000} s: killing it`);
      }
      signalGroup(pid, 'SIGKILL');
      running.delete(child);
    },
  };
  running.add(child);
  return child;
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map((c) => c.stop(5_000)));
}

let installed = false;

/** Children die with the benchmark: normal exit, error, Ctrl-C or SIGTERM. */
export function installChildCleanup(onSignal: () => Promise<void>): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => {
    for (const c of running) signalGroup(c.pid, 'SIGKILL');
  });
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // `on`, not `once`: Ctrl-C reaches this process twice (from the terminal and relayed by
    // the tsx CLI), and a second, unhandled SIGINT would kill it in the middle of cleaning up.
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log(`\n${signal}: stopping child processes and cleaning up`);
      void stopAllChildren()
        .then(onSignal)
        .catch(() => undefined)
        .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
}
