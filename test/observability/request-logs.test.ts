import request from 'supertest';
import { createLogger } from '@switchboard/logger';
import { createTestContext, type TestContext } from '../support/context';
import { logLines } from '../support/log-lines';
import { waitFor } from '../support/wait';

/** Every JSON line the API logged, parsed. */
const { lines, sink } = logLines();

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({}, { logger: createLogger('api', 'info', sink) });
});
afterAll(() => ctx.close());

const linesOf = (requestId: string) => lines.filter((l) => l.request_id === requestId);

test("a 4xx's request_id is in the log, with the tenant and key that made it", async () => {
  const t = await ctx.tenant(['read']);
  const res = await request(ctx.app)
    .get('/v1/calls/call_doesnotexist')
    .set('Authorization', t.auth)
    .expect(404);
  const id = res.body.request_id as string;
  expect(res.headers['x-request-id']).toBe(id);
  const logged = linesOf(id);
  expect(logged.length).toBeGreaterThan(0);
  for (const line of logged) expect(line).toMatchObject({ tenant_id: t.tenantId });
  expect(logged[0]?.key_id).toEqual(expect.stringMatching(/\S/));
});

test('an unauthenticated 401 is logged with its request_id (no tenant known)', async () => {
  const res = await request(ctx.app).get('/v1/calls').expect(401);
  const logged = linesOf(res.body.request_id as string);
  expect(logged.length).toBeGreaterThan(0);
  expect(logged[0]?.tenant_id).toBeUndefined();
});

test("one request's fields never reach another request's lines", async () => {
  const [a, b] = await Promise.all([ctx.tenant(['read']), ctx.tenant(['read'])]);
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      request(ctx.app)
        .get('/v1/calls')
        .set('Authorization', (i % 2 ? a : b).auth),
    ),
  );
  answers.forEach((res, i) => {
    const logged = linesOf(res.headers['x-request-id'] as string);
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) {
      expect(line.tenant_id).toBe((i % 2 ? a : b).tenantId);
    }
  });
});

test('each answered request logs one line with its method, path, status and time', async () => {
  const t = await ctx.tenant(['read']);
  const res = await request(ctx.app)
    .get('/v1/calls?limit=2')
    .set('Authorization', t.auth)
    .expect(200);
  await waitFor('the request line', () =>
    linesOf(res.headers['x-request-id'] as string).some((l) => l.res),
  );
  const done = linesOf(res.headers['x-request-id'] as string).filter((l) => l.res);
  expect(done).toEqual([
    expect.objectContaining({
      level: 30,
      msg: 'request completed',
      req: { method: 'GET', url: '/v1/calls?limit=2' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
      tenant_id: t.tenantId,
    }),
  ]);
});

describe("a client's X-Request-Id", () => {
  it('when well-formed, is the request id: echoed, in the error body and the request line', async () => {
    const t = await ctx.tenant(['read']);
    const id = 'crm-7:retry_2.ABC';
    const res = await request(ctx.app)
      .get('/v1/calls/call_doesnotexist')
      .set('Authorization', t.auth)
      .set('X-Request-Id', id)
      .expect(404);
    expect(res.headers['x-request-id']).toBe(id);
    expect(res.body.request_id).toBe(id);
    await waitFor('the request line', () => linesOf(id).some((l) => l.res));
    expect(linesOf(id).filter((l) => l.res)).toEqual([
      expect.objectContaining({ msg: 'request completed', res: { statusCode: 404 } }),
    ]);
  });

  it('of 128 characters is kept', async () => {
    const id = 'a'.repeat(128);
    const res = await request(ctx.app).get('/v1/calls').set('X-Request-Id', id).expect(401);
    expect(res.headers['x-request-id']).toBe(id);
  });

  it.each([
    ['too long (129 characters)', 'a'.repeat(129)],
    ['with a space', 'abc def'],
    ['with a quote', 'abc"def'],
    ['with a slash', 'abc/def'],
    ['two headers joined', 'abc, def'],
    ['not ASCII', 'réq'],
  ])('%s, is replaced by one of ours and never echoed', async (_name, sent) => {
    const res = await request(ctx.app).get('/v1/calls').set('X-Request-Id', sent).expect(401);
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(res.body.request_id).toBe(id);
    expect(JSON.stringify(res.headers)).not.toContain(sent);
    expect(lines.some((l) => l.request_id === sent)).toBe(false);
  });

  it('when empty, is replaced by one of ours', async () => {
    const res = await request(ctx.app).get('/v1/calls').set('X-Request-Id', '').expect(401);
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
  });
});
