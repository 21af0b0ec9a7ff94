import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createTestDatabase } from '../support/database';
import { CLI_BUNDLE } from '../support/bundles';
import { testEnv } from '../support/env';

// `lead import`: the operator path to the same import machinery, with progress on stderr
// and the finished import as JSON on stdout.
const ROOT = path.resolve(__dirname, '../..');
let db: { name: string; url: string };

beforeAll(async () => {
  db = await createTestDatabase();
});

function cli(...args: string[]) {
  const out = spawnSync(process.execPath, ['--enable-source-maps', CLI_BUNDLE, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...testEnv({ DATABASE_URL: db.url }) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

it('imports the sample file with progress, and refuses what it cannot import', () => {
  const tenant = JSON.parse(cli('tenant', 'create', '--name', 'Importer').stdout);
  const r = cli('lead', 'import', '--tenant', tenant.id, '--file', 'docs/examples/leads.csv');
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({
    tenant_id: tenant.id,
    status: 'completed',
    total_rows: 12,
    processed_rows: 12,
    created: 5,
    skipped: 5,
    duplicates: 2,
  });
  expect(r.stderr).toMatch(/importing .*12\/12 rows/);

  const again = JSON.parse(
    cli('lead', 'import', '--tenant', tenant.id, '--file', 'docs/examples/leads.csv').stdout,
  );
  expect(again).toMatchObject({ created: 0, updated: 5 });

  const missing = cli('lead', 'import', '--tenant', tenant.id, '--file', 'no/such/file.csv');
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('cannot read no/such/file.csv');
  const notCsv = cli('lead', 'import', '--tenant', tenant.id, '--file', 'package.json');
  expect(notCsv.code).toBe(1);
  expect(notCsv.stderr).toContain('header');
  const noTenant = cli(
    'lead',
    'import',
    '--tenant',
    'ten_nope',
    '--file',
    'docs/examples/leads.csv',
  );
  expect(noTenant.code).toBe(2);
});
