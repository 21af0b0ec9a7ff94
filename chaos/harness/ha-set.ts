import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import IORedis from 'ioredis';
import knexFactory from 'knex';
import { migrateLatest } from '../../packages/db/src/migrate';
import { ROOT } from '../../test/support/api-process';
import { createTestContext, type TestContext } from '../../test/support/context';

const run = promisify(execFile);

/** One Postgres member under Patroni: its REST API, its Postgres port, its pid files. */
export interface PgMember {
  name: string;
  restPort: number;
  pgPort: number;
}

/**
 * The set of scripts/ha/start.sh (both parts: Redis under Sentinel, Postgres under Patroni
 * behind HAProxy), started with a state file of its own so that it never meets a set a
 * developer started from this checkout, its database migrated, and a test context on it.
 * The kills are those of a lost host: SIGKILL, no shutdown.
 */
export interface HaSet {
  ctx: TestContext;
  /** DATABASE_URL (through HAProxy), REDIS_SENTINELS and REDIS_SENTINEL_NAME. */
  env: Record<string, string>;
  members: PgMember[];
  /** The member whose Patroni says it is the primary, or null. */
  pgLeader(): Promise<PgMember | null>;
  /** SIGKILLs `member`'s Patroni and its Postgres at once. */
  killPg(member: PgMember): void;
  /** Starts `member`'s Patroni again (it starts its Postgres, rewound if needed). */
  restartPg(member: PgMember): void;
  /** What `member`'s Patroni says it is now: primary, replica, sync (a sync standby) or down. */
  pgRole(member: PgMember): Promise<'primary' | 'sync' | 'replica' | 'down'>;
  /** The port of the Redis primary the Sentinels name now (the first that answers). */
  redisPrimary(): Promise<number>;
  killRedis(port: number): void;
  /** Starts the redis-server of `port` again, empty, as start.sh did; Sentinel demotes it. */
  restartRedis(port: number): Promise<void>;
  /** `master` or `slave` (and its link: `slave up`/`slave connecting`...), or `down`. */
  redisRole(port: number): Promise<string>;
  /** How many replicas the Redis `port` says are online. */
  redisReplicasOnline(port: number): Promise<number>;
  destroy(): Promise<void>;
}

const get = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(1000) }).then(
    (r) => r.status,
    () => 0,
  );

const exported = (stdout: string): Record<string, string> =>
  Object.fromEntries(
    stdout
      .split('\n')
      .filter((l) => l.startsWith('export '))
      .map((l) => l.slice('export '.length).split('=') as [string, string]),
  );

async function onRedis<T>(port: number, fn: (r: IORedis) => Promise<T>): Promise<T> {
  const r = new IORedis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

export async function startHaSet(log: (line: string) => void): Promise<HaSet> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'sb-chaos-ha-'));
  const env = { ...process.env, SWITCHBOARD_HA_STATE: path.join(stateDir, 'ha-dir') };
  const script = (name: string, ...args: string[]) =>
    run('bash', [path.join(ROOT, 'scripts/ha', name), ...args], {
      cwd: ROOT,
      env,
      timeout: 300_000,
    });
  const stop = async () => {
    await script('stop.sh').catch((err: Error) => log(`  scripts/ha/stop.sh: ${err.message}`));
    rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    log('  starting the HA set (scripts/ha/start.sh)');
    const settings = exported((await script('start.sh')).stdout);
    const dir = readFileSync(env.SWITCHBOARD_HA_STATE, 'utf8').trim();
    const url = settings.DATABASE_URL as string;
    const db = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
    try {
      await migrateLatest(db);
    } finally {
      await db.destroy();
    }
    const ctx = await createTestContext(settings);
    const members = ['pg1', 'pg2'].map((name): PgMember => {
      const [rest, pg] = [
        ...readFileSync(path.join(dir, `${name}.yml`), 'utf8').matchAll(
          /listen: 127\.0\.0\.1:(\d+)/g,
        ),
      ].map((m) => Number(m[1]));
      return { name, restPort: rest as number, pgPort: pg as number };
    });
    const sentinels = (settings.REDIS_SENTINELS as string)
      .split(',')
      .map((s) => Number(s.split(':')[1]));
    const pidOf = (file: string) =>
      Number(readFileSync(path.join(dir, file), 'utf8').split('\n')[0]);
    const kill = (pid: number) => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const set: HaSet = {
      ctx,
      env: settings,
      members,
      async pgLeader() {
        for (const m of members)
          if ((await get(`http://127.0.0.1:${m.restPort}/primary`)) === 200) return m;
        return null;
      },
      killPg(member) {
        const postmaster = pidOf(`${member.name}/data/postmaster.pid`);
        kill(pidOf(`${member.name}.pid`));
        kill(postmaster);
      },
      restartPg(member) {
        const yml = path.join(dir, `${member.name}.yml`);
        // As start.sh does: Postgres refuses root, so as root Patroni runs as `postgres`.
        const argv =
          process.getuid?.() === 0
            ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', 'patroni', yml]
            : ['patroni', yml];
        const out = openSync(path.join(dir, `${member.name}.log`), 'a');
        const child = spawn(argv[0] as string, argv.slice(1), {
          detached: true,
          stdio: ['ignore', out, out],
        });
        closeSync(out);
        child.unref();
        // stop.sh stops it by this file.
        writeFileSync(path.join(dir, `${member.name}.pid`), `${child.pid}\n`);
      },
      async pgRole(member) {
        const at = (p: string) => get(`http://127.0.0.1:${member.restPort}/${p}`);
        if ((await at('primary')) === 200) return 'primary';
        if ((await at('sync')) === 200) return 'sync';
        return (await at('replica')) === 200 ? 'replica' : 'down';
      },
      async redisPrimary() {
        for (const port of sentinels) {
          const addr = await onRedis(port, (r) =>
            r.call('SENTINEL', 'get-master-addr-by-name', 'switchboard'),
          ).catch(() => null);
          if (Array.isArray(addr)) return Number(addr[1]);
        }
        throw new Error('no Sentinel answered');
      },
      killRedis(port) {
        kill(pidOf(`redis-${port}.pid`));
      },
      async restartRedis(port) {
        await run('redis-server', [
          ...[
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--dir',
            path.join(dir, `redis-${port}`),
          ],
          ...['--save', '', '--appendonly', 'no', '--daemonize', 'yes'],
          ...['--pidfile', path.join(dir, `redis-${port}.pid`)],
          ...['--logfile', path.join(dir, `redis-${port}.log`)],
        ]);
      },
      async redisRole(port) {
        return onRedis(port, async (r) => {
          const role = (await r.call('ROLE')) as unknown[];
          return role[0] === 'slave' ? `slave ${String(role[3])}` : String(role[0]);
        }).catch(() => 'down');
      },
      async redisReplicasOnline(port) {
        const info = await onRedis(port, (r) => r.info('replication')).catch(() => '');
        return (info.match(/state=online/g) ?? []).length;
      },
      async destroy() {
        await ctx.close().catch(() => undefined);
        await stop();
      },
    };
    return set;
  } catch (err) {
    await stop();
    throw err;
  }
}
