import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '@switchboard/config';
import { closeRedis, createRedis } from '@switchboard/queues';
import { ROOT } from '../support/api-process';
import { testEnv } from '../support/env';

// scripts/ha/start.sh and stop.sh (README, "Redis failover: Sentinel"): the printed settings
// put a process on the set's primary, a second start while it runs prints the same ones, and
// stop ends every process it started and deletes every file. The test's own state file keeps
// it away from a set a developer started from this checkout.
const run = promisify(execFile);
const stateDir = mkdtempSync(path.join(tmpdir(), 'sb-ha-state-'));
const env = { ...process.env, SWITCHBOARD_HA_STATE: path.join(stateDir, 'ha-dir') };
const script = (name: string) =>
  run('bash', [path.join(ROOT, 'scripts/ha', name)], { cwd: ROOT, env, timeout: 120_000 });

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

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('starts a Sentinel set a process can use, once, and stops all of it', async () => {
  const started = exported((await script('start.sh')).stdout);
  expect(Object.keys(started).sort()).toEqual(['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME']);
  const dir = readFileSync(env.SWITCHBOARD_HA_STATE, 'utf8').trim();
  const pids = readdirSync(dir)
    .filter((f) => f.endsWith('.pid'))
    .map((f) => Number(readFileSync(path.join(dir, f), 'utf8')));
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

  expect(exported((await script('start.sh')).stdout)).toEqual(started);

  await script('stop.sh');
  expect(pids.filter(alive)).toEqual([]);
  expect(existsSync(dir)).toBe(false);
  expect(existsSync(env.SWITCHBOARD_HA_STATE)).toBe(false);
}, 180_000);
