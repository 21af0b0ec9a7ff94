import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import IORedis from 'ioredis';
import { freePort } from './api-process';
import { exited, killOnExit } from './children';
import { waitFor } from './wait';

const run = promisify(execFile);

export interface RedisClusterNode {
  port: number;
  /** The cluster bus port (set explicitly: the default, port + 10000, may not be free). */
  busPort: number;
  process: ChildProcess;
}

export interface TestRedisCluster {
  nodes: RedisClusterNode[];
  /** `redis://127.0.0.1:P1,redis://127.0.0.1:P2,…`: the value of REDIS_CLUSTER_NODES. */
  seeds: string;
  /** Stops every node and removes its files. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * A private Redis Cluster of `masters` masters (no replicas) on free loopback ports, its
 * files in a temporary directory, for tests that must not touch the shared Redis. Every node
 * is SIGKILLed when this process exits, whatever happens to the test.
 */
export async function startRedisCluster({ masters = 3 } = {}): Promise<TestRedisCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-redis-cluster-'));
  const nodes: RedisClusterNode[] = [];
  const undo: Array<() => void> = [];
  const stop = async () => {
    for (const node of nodes) node.process.kill('SIGKILL');
    await Promise.all(nodes.map((n) => exited(n.process)));
    for (const u of undo.splice(0)) u();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = await distinctFreePorts(masters * 2);
    for (let i = 0; i < masters; i++) {
      const node = await startNode(dir, ports[2 * i] as number, ports[2 * i + 1] as number);
      undo.push(killOnExit(node.process));
      nodes.push(node);
    }
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: 20_000 },
    );
    await Promise.all(nodes.map((n) => waitForClusterOk(n.port, masters)));
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    nodes,
    seeds: nodes.map((n) => `redis://127.0.0.1:${n.port}`).join(','),
    stop,
  };
}

/** `count` different free ports of 127.0.0.1 (for servers started together). */
export async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let tries = 0; ports.size < count && tries < count * 10; tries++)
    ports.add(await freePort());
  if (ports.size < count) throw new Error(`no ${count} distinct free ports`);
  return [...ports];
}

async function startNode(dir: string, port: number, busPort: number): Promise<RedisClusterNode> {
  const child = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1'],
      ...['--cluster-enabled', 'yes', '--cluster-port', String(busPort)],
      ...['--cluster-config-file', path.join(dir, `nodes-${port}.conf`), '--dir', dir],
      ...['--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server on ${port} not ready within 60 s:\n${output}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-2000);
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server on ${port} exited (${code}):\n${output}`));
    });
  });
  child.removeAllListeners('exit');
  child.stdout?.resume();
  child.stderr?.resume();
  return { port, busPort, process: child };
}

/** Every slot served and every node known, as this node sees it (bounded: 15 s). */
async function waitForClusterOk(port: number, masters: number): Promise<void> {
  const redis = new IORedis({ port, host: '127.0.0.1', lazyConnect: true });
  redis.on('error', () => undefined);
  try {
    let info = '';
    await waitFor(
      `cluster ok on ${port}`,
      async () => {
        info = await redis.cluster('INFO').catch(() => '');
        return (
          info.includes('cluster_state:ok') &&
          info.includes(`cluster_known_nodes:${masters}`) &&
          info.includes('cluster_slots_assigned:16384')
        );
      },
      { timeoutMs: 45_000, intervalMs: 100 },
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}:\n${info}`);
    });
  } finally {
    redis.disconnect();
  }
}
