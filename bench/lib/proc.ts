import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of processes, read from /proc (Linux). Used to say how much CPU one request
 * costs in the server and in Postgres, a figure that other load on the machine disturbs
 * far less than req/s. Returns null where /proc is not available.
 */
let ticksPerSecond: number | null | undefined;

function clockTicks(): number | null {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond =
        Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = null;
    }
  }
  return ticksPerSecond;
}

interface ProcStat {
  pid: number;
  comm: string;
  pgrp: number;
  cpuTicks: number;
}

function readStats(): ProcStat[] | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return null;
  }
  const out: ProcStat[] = [];
  for (const pid of entries) {
    let raw: string;
    try {
      raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const close = raw.lastIndexOf(')');
    const comm = raw.slice(raw.indexOf('(') + 1, close);
    // Fields after the comm: state(3) ppid(4) pgrp(5) … utime(14) stime(15).
    const f = raw.slice(close + 2).split(' ');
    out.push({
      pid: Number(pid),
      comm,
      pgrp: Number(f[2]),
      cpuTicks: Number(f[11]) + Number(f[12]),
    });
  }
  return out;
}

export interface CpuSnapshot {
  /** CPU seconds of the given process group (a child started by startTsChild). */
  group: number;
  /** CPU seconds of all `postgres` processes (backends of other clients included). */
  postgres: number;
}

export function cpuSnapshot(pgid: number | undefined): CpuSnapshot | null {
  const hz = clockTicks();
  const stats = readStats();
  if (!hz || !stats || pgid === undefined) return null;
  let group = 0;
  let postgres = 0;
  for (const s of stats) {
    if (s.pgrp === pgid) group += s.cpuTicks;
    if (s.comm === 'postgres') postgres += s.cpuTicks;
  }
  return { group: group / hz, postgres: postgres / hz };
}

/** CPU seconds so far of each of `pids` that still exists (e.g. one database's backends). */
export function cpuSecondsOf(pids: readonly number[]): Map<number, number> {
  const hz = clockTicks();
  const wanted = new Set(pids);
  const out = new Map<number, number>();
  if (!hz) return out;
  for (const s of readStats() ?? []) {
    if (wanted.has(s.pid)) out.set(s.pid, s.cpuTicks / hz);
  }
  return out;
}

/** Resident memory of a process (VmRSS of /proc/<pid>/status) in bytes, or null. */
export function vmRssBytes(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

/**
 * The process of group `pgid` with the most resident memory: the server itself, whether it
 * was started compiled (the group's leader) or under tsx (a grandchild of the leader).
 */
export function largestOfGroup(pgid: number): number | null {
  let best: { pid: number; rss: number } | null = null;
  for (const s of readStats() ?? []) {
    if (s.pgrp !== pgid) continue;
    const rss = vmRssBytes(s.pid) ?? 0;
    if (!best || rss > best.rss) best = { pid: s.pid, rss };
  }
  return best?.pid ?? null;
}
