import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import IORedis from 'ioredis';
import { ROOT } from './api-process';
import { exited, killOnExit } from './children';
import { distinctFreePorts } from './redis-cluster';
import { waitFor } from './wait';

/** The name the Sentinels monitor the primary under (REDIS_SENTINEL_NAME). */
export const SENTINEL_NAME = 'sbprimary';

/**
 * How long a primary must stay silent before a Sentinel calls it down. Short, so a test's
 * failover takes seconds; long enough that a loaded machine's pause does not start one.
 */
const DOWN_AFTER_MS = 1500;

interface Node {
  port: number;
  process: ChildProcess;
}

export interface TestSentinelSet {
  /** `127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3`: the value of REDIS_SENTINELS. */
  sentinels: string;
  /** The variables that put a process on this set (REDIS_URL's host is not used). */
  env: Record<string, string>;
  /** The port of the primary the Sentinels name now (asked of each until one answers). */
  primaryPort(): Promise<number>;
  /** SIGKILLs the primary the Sentinels name now (a crash: no shutdown); returns its port. */
  killPrimary(): Promise<number>;
  /**
   * Waits until every Sentinel names a primary other than `old` and that server says it is
   * a master: the failover is over for any client that reconnects. Returns the new port.
   */
  waitForNewPrimary(old: number): Promise<number>;
  /** Stops every process and removes the files. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * A private Sentinel set on free loopback ports, its files in a temporary directory: one
 * primary, two replicas and three Sentinels (quorum 2) monitoring it as SENTINEL_NAME, the
 * shape of a production deployment on one machine. No persistence, as the other private
 * servers: a SIGKILLed server's keys survive only where they were replicated. Resolves once
 * both replicas are in sync and every Sentinel knows both replicas and both other Sentinels
 * (before that a failover could not be agreed on). Every process is SIGKILLed when this
 * process exits, whatever happens to the test. `redis-sentinel` comes from
 * scripts/ensure-redis-sentinel.sh (installed with apt-get when missing and root).
 */
export async function startSentinelSet(): Promise<TestSentinelSet> {
  const sentinelBin = execFileSync('bash', [path.join(ROOT, 'scripts/ensure-redis-sentinel.sh')], {
    encoding: 'utf8',
  }).trim();
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-redis-sentinel-'));
  const servers: Node[] = [];
  const sentinels: Node[] = [];
  const undo: Array<() => void> = [];
  const all = () => [...sentinels, ...servers];
  const stop = async () => {
    for (const node of all()) node.process.kill('SIGKILL');
    await Promise.all(all().map((n) => exited(n.process)));
    for (const u of undo.splice(0)) u();
    rmSync(dir, { recursive: true, force: true });
  };
  const started = (node: Node) => {
    undo.push(killOnExit(node.process));
    return node;
  };
  try {
    const ports = await distinctFreePorts(6);
    const [primary, ...replicas] = ports.slice(0, 3) as [number, number, number];
    servers.push(started(await startServer(dir, primary, [])));
    for (const port of replicas)
      servers.push(
        started(await startServer(dir, port, ['--replicaof', '127.0.0.1', String(primary)])),
      );
    await waitFor('both replicas in sync', async () => {
      const info = await command(primary, (r) => r.info('replication'));
      return (info.match(/state=online/g) ?? []).length === 2;
    });
    for (const port of ports.slice(3)) {
      const conf = path.join(dir, `sentinel-${port}.conf`);
      writeFileSync(conf, sentinelConf(port, primary, dir));
      sentinels.push(started(await startProcess(sentinelBin, [conf], port, '+monitor master')));
    }
    await Promise.all(
      sentinels.map((s) =>
        waitFor(`sentinel ${s.port} to know the set`, async () => {
          const fields = await command(s.port, (r) => r.call('SENTINEL', 'MASTER', SENTINEL_NAME));
          const m = pairs(fields as string[]);
          return m['num-slaves'] === '2' && m['num-other-sentinels'] === '2';
        }),
      ),
    );
  } catch (err) {
    await stop();
    throw err;
  }

  const addresses = sentinels.map((s) => `127.0.0.1:${s.port}`).join(',');
  const named = async (port: number): Promise<number> => {
    const addr = await command(port, (r) =>
      r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME),
    );
    return Number((addr as string[])[1]);
  };
  const primaryPort = async () => {
    for (const s of sentinels) {
      const port = await named(s.port).catch(() => undefined);
      if (port) return port;
    }
    throw new Error('no Sentinel answers');
  };
  return {
    sentinels: addresses,
    env: {
      REDIS_URL: '',
      REDIS_CLUSTER_NODES: '',
      REDIS_SENTINELS: addresses,
      REDIS_SENTINEL_NAME: SENTINEL_NAME,
    },
    primaryPort,
    async killPrimary() {
      const port = await primaryPort();
      const node = servers.find((n) => n.port === port);
      if (!node) throw new Error(`the Sentinels name ${port}, not a server of this set`);
      node.process.kill('SIGKILL');
      await exited(node.process);
      return port;
    },
    async waitForNewPrimary(old) {
      return waitFor(`a primary other than ${old}`, async () => {
        const named_ = await Promise.all(sentinels.map((s) => named(s.port).catch(() => 0)));
        const port = named_[0];
        if (!port || port === old || named_.some((p) => p !== port)) return false;
        const role = await command(port, (r) => r.call('ROLE')).catch(() => []);
        return (role as string[])[0] === 'master' && port;
      });
    },
    stop,
  };
}

function sentinelConf(port: number, primary: number, dir: string): string {
  return [
    `port ${port}`,
    'bind 127.0.0.1',
    'daemonize no',
    `dir ${dir}`,
    `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary} 2`,
    `sentinel down-after-milliseconds ${SENTINEL_NAME} ${DOWN_AFTER_MS}`,
    `sentinel failover-timeout ${SENTINEL_NAME} 10000`,
    `sentinel parallel-syncs ${SENTINEL_NAME} 2`,
    '',
  ].join('\n');
}

/**
 * A redis-server with a directory of its own: a replica's full sync writes the primary's
 * snapshot there even without persistence.
 */
function startServer(dir: string, port: number, extra: string[]): Promise<Node> {
  const own = path.join(dir, `server-${port}`);
  mkdirSync(own);
  return startProcess(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', own],
      ...['--save', '', '--appendonly', 'no'],
      ...extra,
    ],
    port,
    'Ready to accept connections',
  );
}

/** Spawns a server and resolves once its log says `ready` (bounded: 60 s). */
async function startProcess(
  bin: string,
  args: string[],
  port: number,
  ready: string,
): Promise<Node> {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${bin} on ${port} not ready within 60 s:\n${output}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-2000);
      if (output.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${bin} on ${port} exited (${code}):\n${output}`));
    });
  });
  child.removeAllListeners('exit');
  child.stdout?.resume();
  child.stderr?.resume();
  return { port, process: child };
}

/** One command on a short-lived connection to 127.0.0.1:`port` (no retries). */
async function command<T>(port: number, run: (r: IORedis) => Promise<T>): Promise<T> {
  const redis = new IORedis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
    commandTimeout: 1000,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await run(redis);
  } finally {
    redis.disconnect();
  }
}

/** A flat [k1, v1, k2, v2, ...] reply as an object. */
function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}
