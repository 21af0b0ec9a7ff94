import { request as httpRequest } from 'node:http';
import { freePort, startApiProcess, type ApiProcess } from '../support/api-process';

/** A port nothing listens on: Postgres and Redis are "down" for this API process. */
let api: ApiProcess;
let metricsPort: number;
beforeAll(async () => {
  const [closed, port] = await Promise.all([freePort(), freePort()]);
  metricsPort = port;
  api = await startApiProcess(null, {
    env: {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/nothing`,
      REDIS_URL: `redis://127.0.0.1:${closed}`,
      API_METRICS_PORT: String(metricsPort),
    },
  });
}, 60_000);
afterAll(() => api.stop());

test('the API serves /metrics on its own port without Postgres or Redis', async () => {
  await fetch(`${api.baseUrl}/healthz`);
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = await res.text();
  expect(text).toContain('# TYPE switchboard_http_requests_total counter');
  expect(text).toMatch(/switchboard_http_requests_total\{method="GET",route="\/healthz"/);
  expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
});

test('keep-alive connections stay open 65 s by default (above load balancer idle timeouts)', async () => {
  const header = await new Promise<string | undefined>((resolve, reject) => {
    httpRequest(`${api.baseUrl}/healthz`, { headers: { Connection: 'keep-alive' } }, (res) => {
      res.resume();
      resolve(res.headers['keep-alive'] as string | undefined);
    })
      .on('error', reject)
      .end();
  });
  expect(header).toBe('timeout=65');
});
