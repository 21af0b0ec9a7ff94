import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { bareEnv, ROOT } from '../support/api-process';
import { CLI_BUNDLE } from '../support/bundles';
import { createTestContext, type TestContext } from '../support/context';

// `npm run cli -- portal link`: the operator's way to a portal link with no API key, with any
// capability (manage_secrets included, which the default link lacks); the API accepts it as
// one it made itself, once, and revoking the tenant's sessions ends it.
let ctx: TestContext;
let tenantId: string;
let admin: string;
beforeAll(async () => {
  ctx = await createTestContext();
  ({ tenantId, auth: admin } = await ctx.tenant(['admin']));
});
afterAll(() => ctx.close());

function cli(...args: string[]) {
  const out = spawnSync(process.execPath, [CLI_BUNDLE, 'portal', 'link', ...args], {
    cwd: ROOT,
    env: { ...bareEnv(), DATABASE_URL: ctx.config.databaseUrl },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

const exchange = (url: string) =>
  request(ctx.app)
    .post('/api/v1/portal/exchange')
    .send({ code: new URL(url).hash.replace('#code=', '') });

test('prints a one-use link whose session holds the capabilities asked for', async () => {
  const r = cli(
    '--tenant',
    tenantId,
    '--capabilities',
    'manage_secrets,manage_endpoints',
    '--base-url',
    'http://127.0.0.1:3100/',
  );
  expect([r.code, r.stderr]).toEqual([0, '']);
  const link = JSON.parse(r.stdout) as { url: string; capabilities: string[] };
  expect(link.url).toMatch(/^http:\/\/127\.0\.0\.1:3100\/portal#code=pc_[0-9a-f]{64}$/);
  expect(link.capabilities).toEqual(['view', 'manage_endpoints', 'manage_secrets']);

  const traded = await exchange(link.url).expect(200);
  expect(traded.body.capabilities).toEqual(['view', 'manage_endpoints', 'manage_secrets']);
  await exchange(link.url).expect(401);
  const token = `Bearer ${traded.body.token as string}`;
  await request(ctx.app).get('/api/v1/webhooks').set('Authorization', token).expect(200);

  // Listed with no creator key, and ended with the tenant's other sessions.
  const live = await request(ctx.app).get('/api/v1/portal/sessions').set('Authorization', admin);
  expect(live.body.data).toEqual([expect.objectContaining({ created_by_key_id: null })]);
  await request(ctx.app).delete('/api/v1/portal/sessions').set('Authorization', admin).expect(200);
  await request(ctx.app).get('/api/v1/webhooks').set('Authorization', token).expect(401);
});

test('without --capabilities the link gets the API default, which cannot rotate secrets', () => {
  const r = cli('--tenant', tenantId);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({
    url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:3000\/portal#code=/),
    capabilities: ['view', 'manage_endpoints', 'recover'],
  });
});

test.each([
  [['--tenant', 'ten_nope'], 'no tenant ten_nope'],
  [['--tenant', 'TENANT', '--capabilities', 'view,root'], '--capabilities takes a list of'],
  [['--tenant', 'TENANT', '--ttl', '60'], '--ttl takes whole seconds'],
  [['--tenant', 'TENANT', '--base-url', 'ftp://x'], '--base-url takes'],
])('%j is a usage error', (args, message) => {
  const r = cli(...args.map((a) => (a === 'TENANT' ? tenantId : a)));
  expect([r.code, r.stdout]).toEqual([2, '']);
  expect(r.stderr).toContain(message);
});
