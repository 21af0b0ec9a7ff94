/**
 * CPU seconds of processes, read from /proc (Linux; empty elsewhere). The worker and the
 * receiver are single processes (spawned with `node`, not a CLI that starts another), so their pid is enough;
 * Postgres and Redis are summed over every process of that name.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let hz: number | undefined;
function ticksPerSecond(): number {
  if (hz === undefined) {
    try {
      hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      hz = 100;
    }
  }
  return hz;
}

/** pid → CPU seconds (user + system, and system alone) of the processes read. */
export type CpuTable = Map<number, { comm: string; seconds: number; system: number }>;

function readOne(pid: string): { comm: string; seconds: number; system: number } | null {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = raw.lastIndexOf(')');
  const comm = raw.slice(raw.indexOf('(') + 1, close);
  // Fields after the comm: state(3) … utime(14) stime(15).
  const f = raw.slice(close + 2).split(' ');
  const hz = ticksPerSecond();
  return { comm, seconds: (Number(f[11]) + Number(f[12])) / hz, system: Number(f[12]) / hz };
}

/** CPU of the given pids and of every process named postgres or redis-server. */
export function cpuTable(pids: readonly number[]): CpuTable {
  const out: CpuTable = new Map();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return out;
  }
  const wanted = new Set(pids.map(String));
  for (const pid of entries) {
    const s = readOne(pid);
    if (!s) continue;
    if (wanted.has(pid) || s.comm === 'postgres' || s.comm === 'redis-server') {
      out.set(Number(pid), s);
    }
  }
  return out;
}

/** CPU seconds spent between two tables by the pids `pick` selects (new pids count fully). */
export function cpuDelta(
  before: CpuTable,
  after: CpuTable,
  pick: (pid: number, comm: string) => boolean,
  which: 'seconds' | 'system' = 'seconds',
): number {
  let sum = 0;
  for (const [pid, a] of after) {
    if (!pick(pid, a.comm)) continue;
    const b = before.get(pid);
    sum += a[which] - (b && b.comm === a.comm ? b[which] : 0);
  }
  return Number(sum.toFixed(2));
}

/**
 * A process's main thread as the scheduler saw it (/proc/<pid>/task/<pid>/schedstat, Linux;
 * null elsewhere): seconds on a CPU, and seconds runnable but waiting for one. The second is
 * what other processes on the same cores (Postgres, the receiver, the process's own GC
 * threads) cost the thread, which its CPU time does not show.
 */
export interface ThreadTime {
  onCpu: number;
  waiting: number;
}

export function threadTime(pid: number | 'self'): ThreadTime | null {
  const path =
    pid === 'self' ? '/proc/thread-self/schedstat' : `/proc/${pid}/task/${pid}/schedstat`;
  try {
    const [run, wait] = readFileSync(path, 'utf8').trim().split(' ').map(Number);
    return { onCpu: (run ?? 0) / 1e9, waiting: (wait ?? 0) / 1e9 };
  } catch {
    return null;
  }
}

/** `after` − `before`, rounded; null when either is missing. */
export function threadDelta(
  before: ThreadTime | null,
  after: ThreadTime | null,
): ThreadTime | null {
  if (!before || !after) return null;
  return {
    onCpu: Number((after.onCpu - before.onCpu).toFixed(2)),
    waiting: Number((after.waiting - before.waiting).toFixed(2)),
  };
}
