import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { loadConfig } from '@switchboard/config';
import { closeRedis, createRedis } from '@switchboard/queues';
import { ROOT } from '../support/api-process';
import { testEnv } from '../support/env';
import { waitFor } from '../support/wait';

// scripts/ha/start.sh and stop.sh (docs/OPERATIONS.md, "Redis failover: Sentinel" and "Postgres
// failover: Patroni"): the printed settings put a process on the Redis primary and on the
// Postgres leader, a second start while a set runs prints the same ones, a commit made through
// HAProxy survives the leader's SIGKILL (synchronous replication), and stop ends every process
// and deletes every file. The test's own state file keeps it away from a set a developer started
// from this checkout. No wall-clock bound: the waits detect hangs only.
const run = promisify(execFile);
const stateDir = mkdtempSync(path.join(tmpdir(), 'sb-ha-state-'));
const env = { ...process.env, SWITCHBOARD_HA_STATE: path.join(stateDir, 'ha-dir') };
const script = (name: string, ...args: string[]) =>
  run('bash', [path.join(ROOT, 'scripts/ha', name), ...args], { cwd: ROOT, env, timeout: 240_000 });

afterAll(async () => {
  await script('stop.sh').catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
});

/** KEY=value of each `export KEY=value` line. */
const exported = (stdout: string): Record<string, string> =>
  Object.fromEntries(
    stdout
      .split('\n')
      .filter((l) => l.startsWith('export '))
      .map((l) => l.slice('export '.length).split('=') as [string, string]),
  );

/** The pids the set's processes wrote, by file name. */
const pidFiles = (dir: string): Record<string, number> =>
  Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith('.pid'))
      .map((f) => [f, Number(readFileSync(path.join(dir, f), 'utf8'))]),
  );

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('starts a Sentinel set a process can use, once, and stops all of it', async () => {
  const started = exported((await script('start.sh', 'redis')).stdout);
  expect(Object.keys(started).sort()).toEqual(['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME']);
  const dir = readFileSync(env.SWITCHBOARD_HA_STATE, 'utf8').trim();
  const pids = Object.values(pidFiles(dir));
  expect(pids).toHaveLength(6);
  expect(pids.every(alive)).toBe(true);

  const config = loadConfig(testEnv(started));
  expect(config.redis).toMatchObject({ mode: 'sentinel', name: 'switchboard' });
  const redis = createRedis(config.redis, 'worker');
  try {
    await redis.set('sb-ha-check', 'written');
    expect(await redis.get('sb-ha-check')).toBe('written');
    expect((await redis.call('ROLE')) as unknown[]).toContain('master');
  } finally {
    await closeRedis(redis);
  }

  expect(exported((await script('start.sh', 'redis')).stdout)).toEqual(started);

  await script('stop.sh');
  expect(pids.filter(alive)).toEqual([]);
  expect(existsSync(dir)).toBe(false);
  expect(existsSync(env.SWITCHBOARD_HA_STATE)).toBe(false);
}, 180_000);

/** One query on a connection of its own (a failover leaves a pool's connections dead). */
async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end().catch(() => undefined);
  }
}

it("starts Postgres under Patroni behind HAProxy; a commit survives the leader's SIGKILL", async () => {
  const started = exported((await script('start.sh', 'postgres')).stdout);
  expect(Object.keys(started)).toEqual(['DATABASE_URL']);
  const url = started.DATABASE_URL as string;
  const dir = readFileSync(env.SWITCHBOARD_HA_STATE, 'utf8').trim();
  const pids = pidFiles(dir);
  // Three etcd members, two Patroni members, HAProxy.
  expect(Object.keys(pids).sort()).toEqual(
    ['etcd1', 'etcd2', 'etcd3', 'haproxy', 'pg1', 'pg2'].map((n) => `${n}.pid`),
  );

  // synchronous_mode: the leader waits for a named standby's confirmation of each commit.
  const [sync] = await query<{ synchronous_standby_names: string }>(
    url,
    'SHOW synchronous_standby_names',
  );
  expect(sync?.synchronous_standby_names).toMatch(/pg[12]/);
  await query(url, 'CREATE TABLE ha_check (n int)');
  await query(url, 'INSERT INTO ha_check VALUES (1)');
  const [leader] = await query<{ port: number }>(url, 'SELECT inet_server_port() AS port');
  const member = ['pg1', 'pg2'].find((m) =>
    readFileSync(path.join(dir, `${m}.yml`), 'utf8').includes(`listen: 127.0.0.1:${leader?.port}`),
  );
  if (!member) throw new Error(`no member listens on ${leader?.port}`);
  const postmaster = Number(
    readFileSync(path.join(dir, member, 'data', 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  // The leader's Patroni and Postgres die at once, as with the loss of its host.
  process.kill(pids[`${member}.pid`] as number, 'SIGKILL');
  process.kill(postmaster, 'SIGKILL');

  const promoted = await waitFor(
    'a write through HAProxy on the promoted standby',
    async () => {
      const rows = await query<{ port: number }>(
        url,
        'INSERT INTO ha_check VALUES (2) RETURNING inet_server_port() AS port',
      ).catch(() => null);
      return rows?.[0]?.port;
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
  expect(promoted).not.toBe(leader?.port);
  const rows = await query<{ n: number }>(url, 'SELECT n FROM ha_check ORDER BY n');
  expect(rows.map((r) => r.n)).toEqual([1, 2]);

  await script('stop.sh');
  expect([...Object.values(pids), postmaster].filter(alive)).toEqual([]);
  expect(existsSync(dir)).toBe(false);
}, 300_000);
