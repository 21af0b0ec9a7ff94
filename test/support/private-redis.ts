import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort } from './api-process';

/**
 * A redis-server of a test's own on a free port of 127.0.0.1, without persistence, for fault
 * tests that kill, restart or freeze Redis: the shared server is never touched. `stop()`
 * kills it (SIGKILL: every key is lost, as in a crash without persistence); `start()` brings
 * up an empty one on the same port; `freeze()` / `thaw()` suspend and resume the process
 * (SIGSTOP / SIGCONT): connections stay open but nothing answers.
 */
export interface PrivateRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  freeze(): void;
  thaw(): void;
  /** The server process's state for a failure message: running, stopped (frozen), or gone. */
  state(): string;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let server: ChildProcess | null = null;
  const redis: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise<void>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
        child.stdout?.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('Ready to accept connections')) {
            child.removeAllListeners('exit');
            resolve();
          }
        });
      });
      server = child;
    },
    async stop() {
      const child = server;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT'); // a frozen process must run to die
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    },
    freeze() {
      server?.kill('SIGSTOP');
    },
    thaw() {
      server?.kill('SIGCONT');
    },
    state() {
      if (!server?.pid || server.exitCode !== null || server.signalCode !== null) return 'gone';
      try {
        // /proc/<pid>/stat: "pid (comm) S ...", S the state (T: stopped by SIGSTOP).
        const stat = readFileSync(`/proc/${server.pid}/stat`, 'utf8');
        return `pid ${server.pid}, state ${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]}`;
      } catch {
        return `pid ${server.pid}`;
      }
    },
  };
  await redis.start();
  return redis;
}
