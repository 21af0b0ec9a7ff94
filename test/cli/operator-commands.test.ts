import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import knexFactory from 'knex';
import IORedis from 'ioredis';
import { bareEnv, ROOT, startApiProcess } from '../support/api-process';
import { TEST_BUNDLES, WORKER_BUNDLE } from '../support/bundles';
import { databaseUrl, REDIS_URL, runId, SERVER_URL } from '../support/env';
import { waitFor } from '../support/worker';

// Every operator command (migrate, the CLI, start:api, start:worker) as an operator runs it
// on a fresh checkout: nothing exported in the shell, settings in `.env` (which `npm start`
// writes) or in the environment, which wins. Each command asks only for what it uses.
let dir: string;
let dbName: string;
const prefix = `{sbt${randomBytes(4).toString('hex')}}`;
const secrets = {
  INGEST_TOKEN: 'dot-env-ingest-token-0123456789',
  CURSOR_SECRET: 'dot-env-cursor-secret-0123456789',
  SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
};
const admin = () => knexFactory({ client: 'pg', connection: SERVER_URL, pool: { min: 0, max: 1 } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-operator-'));
  // An empty database, as on a first deployment: `migrate` must create everything.
  dbName = `sbt_${runId()}_${randomBytes(4).toString('hex')}`;
  const db = admin();
  await db.raw('CREATE DATABASE ??', [dbName]).finally(() => db.destroy());
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const db = admin();
  await db.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [dbName]).finally(() => db.destroy());
  const redis = new IORedis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

const writeDotEnv = (vars: Record<string, string>) =>
  writeFileSync(
    join(dir, '.env'),
    `# written like scripts/start.sh does\n${Object.entries(vars)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n')}\n`,
  );

/**
 * Runs an entry point as `npm run` does, compiled (the global setup built it from this run's
 * sources), from the checkout-like directory, with only `env` exported.
 */
function run(script: string, args: string[], env: Record<string, string> = {}) {
  const out = spawnSync(process.execPath, [bundleOf(script), ...args], {
    cwd: dir,
    env: { ...bareEnv(), ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}
const bundleOf = (entry: string) => resolve(ROOT, TEST_BUNDLES[entry] ?? entry);
const cli = (...args: string[]) => run('apps/cli/src/main.ts', args);

describe('with the settings in .env and nothing exported', () => {
  beforeAll(() =>
    writeDotEnv({ ...secrets, DATABASE_URL: databaseUrl(dbName), QUEUE_PREFIX: prefix }),
  );

  let tenantId: string;

  it('npm run migrate migrates the database .env names', () => {
    const r = run('packages/db/src/migrate-cli.ts', []);
    expect(r.stderr).toMatch(/applied migrations 001_/);
    expect(r.code).toBe(0);
  });

  it('the CLI creates a tenant, a key and a receptionist', () => {
    const tenant = cli('tenant', 'create', '--name', 'Acme Dental');
    expect(tenant.stderr).toBe('');
    expect(tenant.code).toBe(0);
    tenantId = JSON.parse(tenant.stdout).id;
    const key = cli('key', 'create', '--tenant', tenantId, '--scopes', 'admin');
    expect(key.code).toBe(0);
    expect(JSON.parse(key.stdout).key).toMatch(/^sk_live_/);
    const rcp = cli('receptionist', 'create', '--tenant', tenantId, '--name', 'Front Desk');
    expect(rcp.code).toBe(0);
  });

  it('tenant sms-replies sets, shows and resets the keyword reply texts', () => {
    const set = cli(
      'tenant',
      'sms-replies',
      '--id',
      tenantId,
      '--help-text',
      'Call us on 0800 123.',
    );
    expect(set.code).toBe(0);
    const body = JSON.parse(set.stdout);
    expect(body.sms_replies['help-text']).toEqual({ text: 'Call us on 0800 123.', default: false });
    expect(body.sms_replies.stop).toEqual({ text: body.defaults.opt_out, default: true });
    const reset = cli('tenant', 'sms-replies', '--id', tenantId, '--help-text', 'default');
    expect(JSON.parse(reset.stdout).sms_replies['help-text'].default).toBe(true);
    const bad = cli('tenant', 'sms-replies', '--id', tenantId, '--stop', ' ');
    expect(bad.code).not.toBe(0);
  });

  it('npm run start:api starts and answers', async () => {
    const api = await startApiProcess(null, { cwd: dir, env: {} });
    try {
      // Ready once its connections to Postgres and Redis are up (a moment after listening).
      const ready = await waitFor('/readyz to answer 200', async () => {
        const res = await fetch(`${api.baseUrl}/readyz`);
        return res.status === 200 ? res : undefined;
      });
      expect(await ready.json()).toMatchObject({ status: 'ready' });
    } finally {
      await api.stop();
    }
  });

  it('npm run start:worker starts without the API-only secrets', async () => {
    writeDotEnv({
      SECRET_ENCRYPTION_KEY: secrets.SECRET_ENCRYPTION_KEY,
      DATABASE_URL: databaseUrl(dbName),
      QUEUE_PREFIX: prefix,
      METRICS_PORT: '0',
    });
    const worker = spawn(process.execPath, [WORKER_BUNDLE], {
      cwd: dir,
      env: bareEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((r) => worker.once('exit', (code) => r(code)));
    const ready = new Promise<boolean>((r) => {
      const seen = (c: Buffer) => {
        output += c.toString();
        if (output.includes('worker ready')) r(true);
      };
      worker.stdout.on('data', seen);
      worker.stderr.on('data', seen);
      void exited.then(() => r(false));
    });
    const timer = setTimeout(() => worker.kill('SIGKILL'), 30_000);
    try {
      expect(await ready).toBe(true);
    } finally {
      worker.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    }
    expect(output).not.toMatch(/configuration error/);
  }, 90_000);
});

describe('the environment wins over .env', () => {
  it('DATABASE_URL exported beats the one in .env', () => {
    writeDotEnv({ DATABASE_URL: databaseUrl(`sbt_${runId()}_does_not_exist`) });
    const r = run('apps/cli/src/main.ts', ['tenant', 'create', '--name', 'Env Wins'], {
      DATABASE_URL: databaseUrl(dbName),
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('a command asks only for the settings it uses', () => {
  beforeAll(() => rmSync(join(dir, '.env'), { force: true }));

  it('key create needs no INGEST_TOKEN, CURSOR_SECRET or SECRET_ENCRYPTION_KEY', () => {
    const env = { DATABASE_URL: databaseUrl(dbName) };
    const tenant = run('apps/cli/src/main.ts', ['tenant', 'create', '--name', 'Bare'], env);
    expect(tenant.code).toBe(0);
    const id = JSON.parse(tenant.stdout).id as string;
    const key = run(
      'apps/cli/src/main.ts',
      ['key', 'create', '--tenant', id, '--scopes', 'read'],
      env,
    );
    expect(key.stderr).toBe('');
    expect(key.code).toBe(0);
  });

  it('the API refuses to start without INGEST_TOKEN, in one line naming it', () => {
    const r = run('apps/api/src/server.ts', [], {
      DATABASE_URL: databaseUrl(dbName),
      CURSOR_SECRET: secrets.CURSOR_SECRET,
      SECRET_ENCRYPTION_KEY: secrets.SECRET_ENCRYPTION_KEY,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'switchboard: configuration error: INGEST_TOKEN is missing: expected a string of 16+ characters\n',
    );
  });

  it('the worker refuses to start without SECRET_ENCRYPTION_KEY, and asks for nothing else', () => {
    const r = run('apps/worker/src/main.ts', [], { DATABASE_URL: databaseUrl(dbName) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^switchboard: configuration error: SECRET_ENCRYPTION_KEY is missing: expected base64/,
    );
  });
});
