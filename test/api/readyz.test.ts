import { createServer } from 'node:net';
import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { baselineMs, boundMs } from '../support/timing';

/** A port nothing listens on: bind an ephemeral port, then close it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
});
afterAll(() => ctx.close());

describe('with Redis unreachable', () => {
  it('/readyz answers 503 with the error body, fast', async () => {
    const baseline = await baselineMs(() => request(ctx.app).get('/healthz'));
    const started = performance.now();
    const res = await request(ctx.app).get('/readyz');
    const ms = performance.now() - started;
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body.error).toMatchObject({
      type: 'service_unavailable',
      code: 'service_unavailable',
    });
    expect(res.body.error.message).toContain('redis');
    expect(ms).toBeLessThan(boundMs(3000, baseline));
  });

  it('/healthz still answers 200: the process itself is up', async () => {
    expect((await request(ctx.app).get('/healthz')).status).toBe(200);
  });
});
