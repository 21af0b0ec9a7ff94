import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { COMMANDS } from '../../apps/cli/src/commands';
import { helpFor } from '../../apps/cli/src/main';
import { bareEnv, ROOT, TSX_CLI } from '../support/api-process';
import { CLI_BUNDLE } from '../support/bundles';
import { createTestDatabase } from '../support/database';

// The compiled operator CLI (npm run cli = node apps/cli/dist/main.js): help on the CLI and on
// every command, the list commands, a connection failure that names the URL it tried, and
// the .env that npm start writes (scripts/settings.ts).
let db: { name: string; url: string };

// The global setup compiled it from this run's sources (test/support/bundles.ts).
beforeAll(async () => {
  db = await createTestDatabase();
});

function cli(args: string[], env: Record<string, string> = { DATABASE_URL: db.url }) {
  const out = spawnSync(process.execPath, [CLI_BUNDLE, ...args], {
    cwd: ROOT,
    env: { ...bareEnv(), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('help', () => {
  it.each([['--help'], ['-h'], ['help']])('%s lists every command on stdout, exit 0', (flag) => {
    const r = helpFor([flag]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    for (const spec of Object.values(COMMANDS)) expect(r?.stdout).toContain(spec.usage);
  });

  it.each(
    Object.keys(COMMANDS).flatMap((name) => [
      [name, '--help'],
      [name, '-h'],
    ]),
  )('%s %s prints its usage on stdout, exit 0', (name, flag) => {
    expect(helpFor([...name.split(' '), flag, '--tenant'])).toEqual({
      code: 0,
      stdout: expect.stringContaining(`usage: npm run --silent cli -- ${COMMANDS[name]!.usage}`),
      stderr: '',
    });
  });

  it("the compiled CLI answers --help and a command's -h with exit 0 and no setting at all", () => {
    for (const args of [['--help'], ['receptionist', 'list', '-h']]) {
      const r = cli(args, {});
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(r.stdout).toContain('usage: npm run --silent cli --');
    }
    expect(cli([], {}).code).toBe(2);
  });
});

describe('list commands', () => {
  it('tenant list, key list --tenant and receptionist list --tenant show what was created', () => {
    const tenant = JSON.parse(cli(['tenant', 'create', '--name', 'Listed Dental']).stdout);
    const key = JSON.parse(
      cli(['key', 'create', '--tenant', tenant.id, '--scopes', 'read', '--name', 'ci']).stdout,
    );
    const rcp = JSON.parse(
      cli(['receptionist', 'create', '--tenant', tenant.id, '--name', 'Desk']).stdout,
    );
    const tenants = JSON.parse(cli(['tenant', 'list']).stdout).tenants;
    expect(tenants.map((t: { id: string }) => t.id)).toContain(tenant.id);
    const keys = cli(['key', 'list', '--tenant', tenant.id]);
    expect(JSON.parse(keys.stdout).keys).toEqual([
      expect.objectContaining({ id: key.id, name: 'ci', scopes: ['read'], revoked_at: null }),
    ]);
    expect(keys.stdout).not.toContain(key.key);
    const receptionists = JSON.parse(cli(['receptionist', 'list', '--tenant', tenant.id]).stdout);
    expect(receptionists.receptionists).toEqual([
      expect.objectContaining({ id: rcp.id, name: 'Desk', status: 'ready' }),
    ]);
  });

  it('key list of an unknown tenant is a usage error naming it', () => {
    const r = cli(['key', 'list', '--tenant', 'ten_nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no tenant ten_nope');
  });
});

it('a connection failure names the URL it tried, without the password', () => {
  const url = 'postgres://operator:hunter2-secret@127.0.0.1:1/switchboard';
  for (const r of [
    cli(['tenant', 'list'], { DATABASE_URL: url }),
    spawnSync(process.execPath, [resolve(ROOT, 'packages/db/dist/migrate-cli.js')], {
      cwd: ROOT,
      env: { ...bareEnv(), DATABASE_URL: url },
      encoding: 'utf8',
    }),
  ]) {
    expect(r.stderr).toContain(
      'cannot reach Postgres at postgres://operator@127.0.0.1:1/switchboard',
    );
    expect(r.stderr).not.toContain('hunter2');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect('code' in r ? r.code : r.status).toBe(1);
  }
});

describe('npm start remembers its settings in .env (scripts/settings.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-settings-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const settings = (env: Record<string, string>) => {
    const r = spawnSync(process.execPath, [TSX_CLI, resolve(ROOT, 'scripts/settings.ts')], {
      cwd: dir,
      env: { ...bareEnv(), ...env },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    return parseEnv(readFileSync(join(dir, '.env'), 'utf8'));
  };

  it('writes what it was given and what it chose, keeps it, and updates what is given again', () => {
    const first = settings({
      PORT: '3999',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x_db',
    });
    expect(first).toMatchObject({
      PORT: '3999',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x_db',
      REDIS_URL: 'redis://127.0.0.1:6379',
      METRICS_PORT: '9464',
      QUEUE_PREFIX: '{sb}',
    });
    expect(first.SECRET_ENCRYPTION_KEY).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(first.INGEST_TOKEN?.length).toBeGreaterThanOrEqual(16);
    const text = readFileSync(join(dir, '.env'), 'utf8');
    expect(settings({})).toEqual(first);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe(text);
    expect(settings({ METRICS_PORT: '9499' })).toEqual({ ...first, METRICS_PORT: '9499' });
  });

  it('never keeps the development-only WEBHOOK_ALLOW_PRIVATE_TARGETS, nor NODE_ENV', () => {
    const given = settings({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', NODE_ENV: 'development' });
    expect(given.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBeUndefined();
    expect(given.NODE_ENV).toBeUndefined();
    // A file written by an earlier version loses it.
    const file = join(dir, '.env');
    writeFileSync(file, `${readFileSync(file, 'utf8')}WEBHOOK_ALLOW_PRIVATE_TARGETS=true\n`);
    expect(settings({})).toEqual(given);
  });
});
