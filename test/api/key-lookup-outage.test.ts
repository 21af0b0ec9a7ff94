import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { waitFor } from '../support/wait';

// A request whose API key this process has no answer for (neither a cached active key nor a
// cached miss) looks the key up in Postgres. While Postgres is away that lookup fails, and the
// answer must be the outage's (503 service_unavailable with Retry-After), never a 500 nor a 401:
// the key may well be valid. Nothing about the key is remembered from the failed lookup, so a
// valid key presented during the outage works once Postgres is back. The outage is real: a
// private Postgres cluster stopped as the worker's outage tests stop it.
let pg: PrivatePostgres;
let uncached: TestContext;
let cached: TestContext;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const url = await pg.createMigratedDatabase('switchboard');
  uncached = await createTestContext({ DATABASE_URL: url });
  cached = await createTestContext({ DATABASE_URL: url, API_KEY_CACHE_ENABLED: 'true' });
}, 60_000);
afterAll(async () => {
  await Promise.all([uncached?.close(), cached?.close()]);
  await pg?.destroy();
});

const list = (ctx: TestContext, auth: string) =>
  request(ctx.app).get('/api/v1/receptionists').set('Authorization', auth);

const expectOutage = (res: request.Response) => {
  expect({ status: res.status, code: res.body.error?.code }).toEqual({
    status: 503,
    code: 'service_unavailable',
  });
  expect(res.headers['retry-after']).toBe('1');
  expect(res.body.error.type).toBe('service_unavailable');
};

it('an unknown key, and a valid key not cached, get a 503 while Postgres is away, and the valid key works once it is back', async () => {
  const { auth } = await uncached.tenant(['read']);
  const never = 'Bearer sk_live_000000000000000000000000000000000000000a';
  // Neither key was presented to these processes yet: no cache has an answer for them.
  await pg.stop('fast');
  try {
    for (const ctx of [uncached, cached]) {
      expectOutage(await list(ctx, never));
      expectOutage(await list(ctx, auth));
      // Concurrent lookups share one statement (one batch): they fail together, as 503s.
      const together = await Promise.all([list(ctx, never), list(ctx, auth), list(ctx, never)]);
      together.forEach(expectOutage);
    }
  } finally {
    await pg.start();
  }
  for (const ctx of [uncached, cached]) {
    const back = await waitFor('the key to be accepted again', async () => {
      const res = await list(ctx, auth);
      return res.status === 503 ? undefined : res;
    });
    expect(back.status).toBe(200);
    expect((await list(ctx, never)).status).toBe(401);
  }
});
