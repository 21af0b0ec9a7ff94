import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { migrateLatest } from '../../packages/db/src/migrate';
import { freePort } from './api-process';

/**
 * A Postgres cluster of a test's own (initdb + pg_ctl on a free port of 127.0.0.1), for fault
 * tests that stop, crash or restart the server: the shared server is never touched. Trust
 * authentication, user `postgres`, no Unix socket. `fsync` is off to keep it fast; that only
 * matters when the machine itself loses power, never for the process crashes these tests
 * cause (`stop('immediate')` discards what is still in Postgres' own memory, as a crash does,
 * while written WAL survives in the operating system's cache).
 *
 * Binaries: `PG_BIN` if set, else `pg_config --bindir`, else the PATH. Run as root, the
 * server runs as the `postgres` OS user (Postgres refuses to run as root).
 */
export interface PrivatePostgres {
  port: number;
  /** A connection URL for `database` (default `postgres`). */
  url(database?: string): string;
  /** Creates a database migrated to the latest schema; returns its URL. */
  createMigratedDatabase(name: string): Promise<string>;
  /** Starts the server and waits until it accepts connections (crash recovery included). */
  start(): Promise<void>;
  /**
   * Stops the server. `fast` disconnects clients and shuts down cleanly; `immediate` kills it
   * like a crash (the next start runs crash recovery; asynchronous commits not yet flushed
   * from Postgres' WAL buffers are lost).
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops the server if it runs and deletes its files. */
  destroy(): Promise<void>;
}

export interface PrivatePostgresOptions {
  /** Extra server settings (`-c name=value`), e.g. `{ wal_writer_delay: '10s' }`. */
  settings?: Record<string, string>;
}

function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/** uid/gid to run the server as: the `postgres` user when we are root, else ourselves. */
function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
  return { uid: id('-u'), gid: id('-g') };
}

function run(bin: string, args: string[], user: ReturnType<typeof serverUser>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(user ?? {}),
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`${path.basename(bin)} ${args[0]} exited ${code}:\n${out}`)),
    );
  });
}

export async function startPrivatePostgres(
  options: PrivatePostgresOptions = {},
): Promise<PrivatePostgres> {
  const bin = (name: string) => (binDir() ? path.join(binDir(), name) : name);
  const user = serverUser();
  const root = mkdtempSync(path.join(tmpdir(), 'sb-pg-'));
  if (user) chownSync(root, user.uid, user.gid);
  const data = path.join(root, 'data');
  const log = path.join(root, 'server.log');
  const port = await freePort();
  await run(
    bin('initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    user,
  );
  const settings: Record<string, string> = {
    port: String(port),
    listen_addresses: '127.0.0.1',
    unix_socket_directories: "''",
    fsync: 'off',
    max_connections: '100',
    ...options.settings,
  };
  const serverOptions = Object.entries(settings)
    .map(([k, v]) => `-c ${k}=${v}`)
    .join(' ');
  let running = false;
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

  const pg: PrivatePostgres = {
    port,
    url,
    async start() {
      await run(bin('pg_ctl'), ['start', '-D', data, '-l', log, '-w', '-o', serverOptions], user);
      running = true;
    },
    async stop(mode = 'fast') {
      if (!running) return;
      await run(bin('pg_ctl'), ['stop', '-D', data, '-m', mode, '-w'], user);
      running = false;
    },
    async createMigratedDatabase(name) {
      const admin = knexFactory({ client: 'pg', connection: url(), pool: { min: 0, max: 1 } });
      try {
        await admin.raw('CREATE DATABASE ??', [name]);
      } finally {
        await admin.destroy();
      }
      const db = knexFactory({ client: 'pg', connection: url(name), pool: { min: 0, max: 1 } });
      try {
        await migrateLatest(db);
      } finally {
        await db.destroy();
      }
      return url(name);
    },
    async destroy() {
      try {
        if (existsSync(path.join(data, 'postmaster.pid'))) running = true;
        await pg.stop('immediate');
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
  try {
    await pg.start();
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return pg;
}
