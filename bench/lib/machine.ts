import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', timeout: 5000 }).trim();
  } catch {
    return 'unavailable';
  }
}

export interface MachineInfo {
  nproc: string;
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  freeH: string;
  node: string;
  platform: string;
  loadavg: number[];
}

export function machineInfo(): MachineInfo {
  return {
    nproc: run('nproc', []),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    freeH: run('free', ['-h']),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadavg: loadavg().map((n) => Number(n.toFixed(2))),
  };
}
