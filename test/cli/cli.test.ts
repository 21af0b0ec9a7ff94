import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { billingPeriodOf, createKnex, UsageStore } from '@switchboard/db';
import { createTestDatabase } from '../support/database';
import { CLI_BUNDLE } from '../support/bundles';
import { testEnv } from '../support/env';

const ROOT = path.resolve(__dirname, '../..');
let db: { name: string; url: string };

beforeAll(async () => {
  db = await createTestDatabase();
});

/** Runs the operator CLI as an operator would, in its own process. */
function cli(...args: string[]) {
  const out = spawnSync(process.execPath, ['--enable-source-maps', CLI_BUNDLE, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...testEnv({ DATABASE_URL: db.url }) },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('operator CLI', () => {
  let tenantId: string;

  it('tenant create prints the tenant as JSON', () => {
    const r = cli('tenant', 'create', '--name', 'Acme Dental', '--plan-minutes', '500');
    expect(r.code).toBe(0);
    const tenant = JSON.parse(r.stdout);
    expect(tenant).toMatchObject({ name: 'Acme Dental', plan_minutes: 500 });
    expect(tenant.id).toMatch(/^ten_[0-9a-f]{32}$/);
    tenantId = tenant.id;
  });

  it('key create prints the key once, with its scopes; key revoke revokes it', () => {
    const r = cli('key', 'create', '--tenant', tenantId, '--scopes', 'read,write', '--name', 'ci');
    expect(r.code).toBe(0);
    const key = JSON.parse(r.stdout);
    expect(key.id).toMatch(/^key_/);
    expect(key.key).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);
    expect(key.scopes).toEqual(['read', 'write']);
    const revoked = cli('key', 'revoke', '--id', key.id);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: key.id });
    expect(JSON.parse(revoked.stdout).revoked_at).toEqual(expect.any(String));
    expect(revoked.stdout).not.toContain(key.key);
  });

  it('key create --mode test makes an sk_test_ key (test mode); live is the default', () => {
    const r = cli('key', 'create', '--tenant', tenantId, '--scopes', 'admin', '--mode', 'test');
    expect(r.code).toBe(0);
    const key = JSON.parse(r.stdout);
    expect(key.key).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
    expect(key).toMatchObject({ mode: 'test', prefix: key.key.slice(0, 12) });
    const live = JSON.parse(cli('key', 'create', '--tenant', tenantId, '--scopes', 'read').stdout);
    expect(live).toMatchObject({ mode: 'live' });
    const bad = cli('key', 'create', '--tenant', tenantId, '--scopes', 'read', '--mode', 'demo');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown mode');
  });

  it('tenant portal-origins sets the frame-ancestors allow-list; --none clears it', () => {
    const r = cli(
      'tenant',
      'portal-origins',
      '--id',
      tenantId,
      '--origins',
      'https://app.acme.example,https://*.acme.example',
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      id: tenantId,
      portal_origins: ['https://app.acme.example', 'https://*.acme.example'],
    });
    const bad = cli('tenant', 'portal-origins', '--id', tenantId, '--origins', "'unsafe-inline'");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not an origin');
    const cleared = cli('tenant', 'portal-origins', '--id', tenantId, '--none');
    expect(JSON.parse(cleared.stdout).portal_origins).toEqual([]);
  });

  it('receptionist create prints a ready receptionist with a phone number', async () => {
    const r = cli('receptionist', 'create', '--tenant', tenantId, '--name', 'Front Desk');
    expect(r.code).toBe(0);
    const rcp = JSON.parse(r.stdout);
    expect(rcp).toMatchObject({ name: 'Front Desk', status: 'ready', tenant_id: tenantId });
    expect(rcp.id).toMatch(/^rcp_/);
    expect(rcp.phone_number).toMatch(/^\+1\d{10}$/);
    // receptionist.ready went through the outbox with it.
    const knex = createKnex(db.url, { poolMax: 1 });
    try {
      const events = await knex('events').where({ receptionist_id: rcp.id });
      expect(events.map((e: { type: string }) => e.type)).toEqual(['receptionist.ready']);
      expect(events[0].data).toMatchObject({ phone_number: rcp.phone_number, plan: 'standard' });
    } finally {
      await knex.destroy();
    }
  });

  it('seed-demo prints the tenant, an admin key and receptionists; a rerun reuses the tenant', async () => {
    const first = cli('seed-demo');
    expect(first.code).toBe(0);
    const out = JSON.parse(first.stdout);
    expect(out.api_key.key).toMatch(/^sk_live_/);
    expect(out.api_key.scopes).toEqual(['admin']);
    expect(out.receptionists.length).toBeGreaterThanOrEqual(3);
    // The plan sits just over this month's seeded minutes: one more minute reaches 80 %.
    const knex = createKnex(db.url, { poolMax: 1 });
    try {
      const used = (await new UsageStore(knex).get(out.tenant.id, billingPeriodOf(new Date())))
        ?.minutesUsed as number;
      expect(used * 100).toBeLessThan(80 * out.tenant.plan_minutes);
      expect((used + 1) * 100).toBeGreaterThanOrEqual(80 * out.tenant.plan_minutes);
    } finally {
      await knex.destroy();
    }
    const again = JSON.parse(cli('seed-demo').stdout);
    expect(again.tenant.id).toBe(out.tenant.id);
    expect(again.created).toBe(false);
    expect(again.api_key.key).not.toBe(out.api_key.key);
  });

  it.each([
    [[]],
    [['tenant']],
    [['tenant', 'create']],
    [['tenant', 'create', '--name']],
    [['tenant', 'create', '--name', 'x', '--bogus', '1']],
    [['key', 'create', '--tenant', 'ten_x', '--scopes', 'root']],
    [['frobnicate']],
  ])('bad arguments %j print the usage and exit non-zero', (args) => {
    const r = cli(...args);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('usage: npm run --silent cli --');
    expect(r.stdout).toBe('');
  });
});
