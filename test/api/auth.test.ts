import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/worker';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const expectAuthError = (res: request.Response, code: string) => {
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toBe('Bearer');
  expect(res.body.error).toMatchObject({ type: 'authentication_error', code });
  expect(res.body.request_id).toMatch(/^req_/);
};

describe('authentication', () => {
  it('refuses a request without Authorization', async () => {
    expectAuthError(await request(ctx.app).get('/api/v1/receptionists'), 'missing_api_key');
  });

  it.each([['Basic abc'], ['Bearer'], ['Bearer '], ['bearer sk_live_x'], ['Bearer a b']])(
    'refuses a malformed header %j',
    async (header) => {
      const res = await request(ctx.app).get('/api/v1/receptionists').set('Authorization', header);
      expectAuthError(res, 'invalid_authorization_header');
    },
  );

  it('refuses an unknown key', async () => {
    const res = await request(ctx.app)
      .get('/api/v1/receptionists')
      .set('Authorization', 'Bearer sk_live_00000000000000000000000000000000');
    expectAuthError(res, 'invalid_api_key');
  });

  it('refuses a revoked key from the very next request', async () => {
    const { tenantId } = await ctx.tenant();
    const key = await ctx.keyFor(tenantId, ['read']);
    const ok = await request(ctx.app).get('/api/v1/receptionists').set('Authorization', key.auth);
    expect(ok.status).toBe(200);
    await ctx.deps.stores.apiKeys.revoke(key.id);
    const res = await request(ctx.app).get('/api/v1/receptionists').set('Authorization', key.auth);
    expectAuthError(res, 'invalid_api_key');
  });

  it('records last use of a key', async () => {
    const { tenantId } = await ctx.tenant();
    const key = await ctx.keyFor(tenantId, ['read']);
    const unused = await ctx.deps.knex('api_keys').where({ id: key.id }).first();
    expect(unused.last_used_at).toBeNull();
    const before = Date.now();
    await request(ctx.app).get('/api/v1/receptionists').set('Authorization', key.auth).expect(200);
    // touch() is fire-and-forget, off the request path: wait for its commit (bounded).
    const row = await waitFor('last_used_at to be written', async () => {
      const r = await ctx.deps.knex('api_keys').where({ id: key.id }).first();
      return r.last_used_at ? r : undefined;
    });
    expect(row.last_used_at).toBeInstanceOf(Date);
    // Written for this request: between its start and now (the database's clock is the
    // machine's; a millisecond for rounding).
    expect(row.last_used_at.getTime()).toBeGreaterThanOrEqual(before - 1);
    expect(row.last_used_at.getTime()).toBeLessThanOrEqual(Date.now() + 1);
  });
});

describe('scopes on a read route', () => {
  it.each([['read'], ['write'], ['admin']] as const)('%s may read', async (scope) => {
    const { auth } = await ctx.tenant([scope]);
    const res = await request(ctx.app).get('/api/v1/receptionists').set('Authorization', auth);
    expect(res.status).toBe(200);
  });
});
