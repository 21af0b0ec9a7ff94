/**
 * `npm run bench`: runs every benchmark listed below, one after the other, each in its own
 * process. `npm run bench -- calls` runs only the named ones; `npm run bench -- --list` lists.
 *
 * To add a benchmark: write bench/<name>.ts (runnable on its own with tsx, exiting non-zero
 * on failure, results to bench/.results/) and add one entry here.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

interface Benchmark {
  name: string;
  /** Path from the repository root. */
  file: string;
  description: string;
}

export const BENCHMARKS: readonly Benchmark[] = [
  {
    name: 'calls',
    file: 'bench/calls.ts',
    description:
      'call history at 2,000,000 calls: cursor depth latency and list throughput (issue 3)',
  },
  {
    name: 'outbound',
    file: 'bench/outbound.ts',
    description:
      'POST /calls/outbound req/s, unique Idempotency-Keys and replays, vs a bare SET NX + GET route (issue 6)',
  },
  {
    name: 'delivery',
    file: 'bench/delivery.ts',
    description:
      'webhook deliveries/s of one worker vs a raw axios loop and a BullMQ no-op worker, ingest → receipt latency, 100-way fan-out (issue 5)',
  },
  {
    name: 'usage',
    file: 'bench/usage.ts',
    description:
      'GET /usage p50 at 1M vs 1k calls in the month, call.ended ingestion req/s with metering vs without (issue 11)',
  },
  {
    name: 'sms',
    file: 'bench/sms.ts',
    description:
      'POST /sms/send vs POST /calls/outbound req/s (unique keys); SMS history page latency at depth 1M vs 0 (issue 12)',
  },
  {
    name: 'leads',
    file: 'bench/leads.ts',
    description:
      'lead search p50 at 1,000,000 vs 10,000 leads; 100k-row CSV import vs an INSERT … ON CONFLICT loop; API memory while uploading (issue 13)',
  },
  {
    name: 'campaigns',
    file: 'bench/campaigns.ts',
    description:
      'a 10,000-recipient campaign at 600/min on two workers: achieved vs configured rate; CPU per campaign message vs per POST /sms/send (issue 14)',
  },
  {
    name: 'startup',
    file: 'bench/startup.ts',
    description:
      'start-up time, CPU and resident memory of the API and the worker, sources under tsx vs compiled; CLI command time (issue 21)',
  },
  {
    name: 'scale',
    file: 'bench/scale.ts',
    description:
      'history at scale: 5M deliveries + 1M calls by COPY (--scale), the online partitioning migration, one worker vs an empty database, pages at depth, dropping a day, sizes before/after retention (issue 28)',
  },
  {
    name: 'fairness',
    file: 'bench/fairness.ts',
    description:
      "tenant A's ingest → receipt beside tenant D's burst of events and tenant C's 60 hung subscriptions; A's GET /usage beside a bogus-key flood (issue 22)",
  },
  {
    name: 'streams',
    file: 'bench/streams.ts',
    description:
      'ingest → event stream latency with 1 and with 1,000 streams open on one API process; its memory per stream (issue 46)',
  },
];

const ROOT = resolve(__dirname, '..');
const TSX_CLI = resolve(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

let interrupted = false;

function runOne(b: Benchmark): Promise<number> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [TSX_CLI, b.file], { cwd: ROOT, stdio: 'inherit' });
    // Ctrl-C reaches the child through the terminal; a SIGTERM sent to this runner is passed
    // on. Either way the benchmark cleans up after itself and no further one starts.
    const onInt = () => {
      interrupted = true;
    };
    const onTerm = () => {
      interrupted = true;
      child.kill('SIGTERM');
    };
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      done(code ?? (signal ? 1 : 0));
    });
    child.on('error', (err) => {
      process.stderr.write(`bench: could not start ${b.file}: ${err.message}\n`);
      done(1);
    });
  });
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--list')) {
    for (const b of BENCHMARKS) process.stdout.write(`${b.name.padEnd(16)} ${b.description}\n`);
    return 0;
  }
  const unknown = args.filter((a) => !BENCHMARKS.some((b) => b.name === a));
  if (unknown.length) {
    process.stderr.write(`bench: unknown benchmark ${unknown.join(', ')} (see --list)\n`);
    return 2;
  }
  const selected = args.length ? BENCHMARKS.filter((b) => args.includes(b.name)) : BENCHMARKS;
  const summary: { name: string; code: number; seconds: number }[] = [];
  for (const b of selected) {
    if (interrupted) break;
    process.stderr.write(`\n=== bench ${b.name}: ${b.description}\n`);
    const started = Date.now();
    const code = await runOne(b);
    summary.push({ name: b.name, code, seconds: (Date.now() - started) / 1000 });
  }
  process.stderr.write('\n=== bench summary\n');
  for (const s of summary) {
    process.stderr.write(
      `${s.name.padEnd(16)} ${s.code === 0 ? 'ok' : `FAILED (exit ${s.code})`}  ${s.seconds.toFixed(0)} s\n`,
    );
  }
  return interrupted ? 130 : summary.every((s) => s.code === 0) ? 0 : 1;
}

void main().then((code) => process.exit(code));
