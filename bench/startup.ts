/**
 * Start-up of the services, sources under tsx vs the compiled build (issue 21):
 * `npm run bench:startup`. For the API and the worker: the wall time from spawn until the API
 * answers /healthz (the worker logs "worker ready"), the CPU the process spent getting there
 * (from /proc, which other load on the machine disturbs far less than wall time) and its
 * resident memory once ready. For the CLI: wall and CPU time of `tenant list`. Runs
 * `npm run build -- services` first. Needs Postgres and Redis on 127.0.0.1.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import knexFactory from 'knex';
import { createKnex, migrateLatest } from '@switchboard/db';
import { saveResult } from './lib/results';

const ROOT = resolve(__dirname, '..');
const RUNS = Number(process.env.STARTUP_RUNS ?? 5);
const DB = 'switchboard_bench_startup';
const SERVER = process.env.BENCH_DATABASE_SERVER ?? 'postgres://postgres@127.0.0.1:5432';
const TSX = ['--import', 'tsx'];
const log = (line: string) => process.stderr.write(`${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** CPU seconds (user + system) and resident MiB of a live process, from /proc. */
function usage(pid: number): { cpu: number; rssMiB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const cpu = (Number(stat[11]) + Number(stat[12])) / hz;
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return { cpu, rssMiB: Number(rss) / 1024 };
}

async function startOnce(args: string[], env: Record<string, string>, ready: 'http' | 'log') {
  const port = env.PORT as string;
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  try {
    for (let i = 0; i < 3000; i++) {
      if (child.exitCode !== null) throw new Error(`exited early:\n${out}`);
      const up =
        ready === 'log'
          ? out.includes('"worker ready"')
          : await fetch(`http://127.0.0.1:${port}/healthz`).then(
              (r) => r.ok,
              () => false,
            );
      if (up) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const ms = performance.now() - t0;
    // Memory once settled: connections are up a moment after the first answer.
    await new Promise((r) => setTimeout(r, 500));
    return { ms, ...usage(child.pid as number) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

function cliOnce(args: string[], env: Record<string, string>) {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(r.stderr);
  const [user, sys] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { ms, cpu: (user ?? 0) + (sys ?? 0) };
}

async function main(): Promise<void> {
  const startedAt = new Date();
  execFileSync('npm', ['run', '--silent', 'build', '--', 'services'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const admin = knexFactory({
    client: 'pg',
    connection: `${SERVER}/postgres`,
    pool: { min: 0, max: 1 },
  });
  const exists = await admin('pg_database').where({ datname: DB }).first();
  if (!exists) await admin.raw('CREATE DATABASE ??', [DB]);
  await admin.destroy();
  const knex = createKnex(`${SERVER}/${DB}`);
  await migrateLatest(knex);
  await knex.destroy();
  const env = {
    DATABASE_URL: `${SERVER}/${DB}`,
    QUEUE_PREFIX: '{sbbenchstartup}',
    INGEST_TOKEN: 'bench-ingest-token-0123456789',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789',
    SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    LOG_LEVEL: 'info',
  };
  const services = [
    ['API', 'tsx', [...TSX, 'apps/api/src/server.ts'], 'http'],
    ['API', 'compiled', ['apps/api/dist/server.js'], 'http'],
    ['worker', 'tsx', [...TSX, 'apps/worker/src/main.ts'], 'log'],
    ['worker', 'compiled', ['apps/worker/dist/main.js'], 'log'],
  ] as const;
  const rows: Array<Record<string, string | number>> = [];
  for (const [name, how, args, ready] of services) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      const port = String(await freePort());
      runs.push(
        await startOnce(
          [...args],
          { ...env, PORT: port, METRICS_PORT: String(await freePort()) },
          ready,
        ),
      );
    }
    rows.push({
      service: name,
      how,
      'ready, ms (median)': Math.round(median(runs.map((r) => r.ms))),
      'CPU to ready, s': Number(median(runs.map((r) => r.cpu)).toFixed(2)),
      'RSS, MiB': Math.round(median(runs.map((r) => r.rssMiB))),
    });
    log(`${name} ${how}: done`);
  }
  for (const [how, args] of [
    ['tsx', [...TSX, 'apps/cli/src/main.ts', 'tenant', 'list']],
    ['compiled', ['apps/cli/dist/main.js', 'tenant', 'list']],
  ] as const) {
    const runs = Array.from({ length: RUNS }, () => cliOnce([...args], env));
    rows.push({
      service: 'CLI tenant list',
      how,
      'ready, ms (median)': Math.round(median(runs.map((r) => r.ms))),
      'CPU to ready, s': Number(median(runs.map((r) => r.cpu)).toFixed(2)),
      'RSS, MiB': '',
    });
  }
  console.table(rows);
  log(
    `load average during the run: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (${RUNS} runs each)`,
  );
  saveResult('startup', startedAt, { runs: RUNS, loadavg: loadavg(), rows }, log);
}

main().catch((err: unknown) => {
  log(`bench:startup failed: ${(err as Error).message}`);
  process.exit(1);
});
