import { loadConfig } from '@switchboard/config';
import { catalog } from '@switchboard/queues';
import { createTestContext, type TestContext } from '../support/context';
import { testEnv } from '../support/env';
import { startTestWorker, type TestWorker } from '../support/worker';

// The operator's queue dashboard (docs/OPERATIONS.md, "Operator view of the queues"): bull-board
// on the worker's metrics port, off by default, behind QUEUE_DASHBOARD_TOKEN, read-only, showing
// every queue of the job catalog.
const TOKEN = 'dashboard-token-0123456789abcdef';
const CATALOG_QUEUES = Object.values(catalog)
  .map((def) => def.queue)
  .sort();
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const get = (worker: TestWorker, path: string, authorization?: string, method = 'GET') =>
  fetch(`http://127.0.0.1:${worker.runner.metricsPort}${path}`, {
    method,
    headers: authorization ? { Authorization: authorization } : {},
  });

describe('disabled (the default)', () => {
  let worker: TestWorker;
  beforeAll(async () => {
    worker = await startTestWorker(ctx, { runner: { metricsPort: 0 } });
  });
  afterAll(() => worker.close());

  it('is not there: 404, with or without the token; /metrics still answers', async () => {
    expect(ctx.config.queueDashboard).toBeNull();
    expect((await get(worker, '/admin/queues')).status).toBe(404);
    expect((await get(worker, '/admin/queues/api/queues', `Bearer ${TOKEN}`)).status).toBe(404);
    expect((await get(worker, '/metrics')).status).toBe(200);
  });
});

describe('enabled', () => {
  let worker: TestWorker;
  beforeAll(async () => {
    const config = loadConfig(
      testEnv({
        DATABASE_URL: ctx.config.databaseUrl,
        QUEUE_PREFIX: ctx.config.queuePrefix,
        QUEUE_DASHBOARD_ENABLED: 'true',
        QUEUE_DASHBOARD_TOKEN: TOKEN,
      }),
    );
    worker = await startTestWorker(ctx, { config, runner: { metricsPort: 0 } });
  });
  afterAll(() => worker.close());

  it.each([
    ['no credentials', undefined],
    ['a wrong Bearer token', 'Bearer not-the-dashboard-token-at-all'],
    ['the token with a character more', `Bearer ${TOKEN}x`],
    ['a wrong Basic password', basic('operator', 'not-the-dashboard-token')],
    ['the token as the Basic user name', basic(TOKEN, '')],
    ['another scheme', `Token ${TOKEN}`],
  ])('refuses %s: 401 with a Basic challenge', async (_what, authorization) => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const res = await get(worker, path, authorization);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="Switchboard queues"/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe(
        'authentication_error',
      );
    }
  });

  it('serves the dashboard page to a browser that logged in with Basic auth', async () => {
    const res = await get(worker, '/admin/queues', basic('operator', TOKEN));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('Switchboard queues');
    expect(html).toContain('<base href="/admin/queues/"');
    // Its assets sit behind the same login (the browser resends the credentials).
    const asset = '/admin/queues/static/favicon-32x32.png';
    expect((await get(worker, asset)).status).toBe(401);
    expect((await get(worker, asset, basic('operator', TOKEN))).status).toBe(200);
  });

  it('lists every queue of the job catalog in its API, read-only', async () => {
    const res = await get(worker, '/admin/queues/api/queues', `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { queues: Array<{ name: string; readOnlyMode: boolean }> };
    expect(body.queues.map((q) => q.name).sort()).toEqual(CATALOG_QUEUES);
    expect(body.queues.every((q) => q.readOnlyMode)).toBe(true);
  });

  it('refuses to change a queue (read-only) and /metrics needs no token', async () => {
    const pause = await get(
      worker,
      '/admin/queues/api/queues/deliveries/pause',
      `Bearer ${TOKEN}`,
      'PUT',
    );
    expect(pause.status).toBe(405);
    expect(await ctx.queues.deliveries.isPaused()).toBe(false);
    expect((await get(worker, '/metrics')).status).toBe(200);
  });
});
