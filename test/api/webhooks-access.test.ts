import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';

// Scopes (admin only), tenant isolation (404) and path id validation on every webhook route.
let ctx: TestContext;
let owner: { tenantId: string; auth: string };
let stranger: { tenantId: string; auth: string };
let id: string;

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await ctx.tenant(['admin']);
  stranger = await ctx.tenant(['admin']);
  const res = await request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', owner.auth)
    .send({ url: 'https://127.0.0.1:9/hook' });
  id = res.body.id;
});
afterAll(() => ctx.close());

type Method = 'get' | 'post' | 'delete';
const call = (method: Method, path: string, auth: string) => {
  const req = request(ctx.app)[method](path).set('Authorization', auth);
  return method === 'post' && path === '/api/v1/webhooks'
    ? req.send({ url: 'https://127.0.0.1:9/hook' })
    : req;
};

const routes = (subscription: string): Array<[Method, string]> => [
  ['post', '/api/v1/webhooks'],
  ['get', '/api/v1/webhooks'],
  ['get', `/api/v1/webhooks/${subscription}`],
  ['delete', `/api/v1/webhooks/${subscription}`],
  ['post', `/api/v1/webhooks/${subscription}/test`],
  ['post', `/api/v1/webhooks/${subscription}/enable`],
];
const idRoutes = (subscription: string) => routes(subscription).slice(2);

describe('scopes', () => {
  it.each(['read', 'write'] as const)(
    'a %s key gets 403 insufficient_scope everywhere',
    async (scope) => {
      const key = await ctx.keyFor(owner.tenantId, [scope]);
      for (const [method, path] of routes(id)) {
        const res = await call(method, path, key.auth);
        expect([method, path, res.status]).toEqual([method, path, 403]);
        expect(res.body.error).toMatchObject({
          type: 'permission_error',
          code: 'insufficient_scope',
        });
      }
      const still = await request(ctx.app)
        .get(`/api/v1/webhooks/${id}`)
        .set('Authorization', owner.auth);
      expect(still.status).toBe(200);
    },
  );

  it('without a key every route is 401', async () => {
    for (const [method, path] of routes(id)) {
      const res = await request(ctx.app)[method](path);
      expect([method, path, res.status]).toEqual([method, path, 401]);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('an admin key may list and get', async () => {
    const key = await ctx.keyFor(owner.tenantId, ['admin']);
    expect((await call('get', '/api/v1/webhooks', key.auth)).status).toBe(200);
    expect((await call('get', `/api/v1/webhooks/${id}`, key.auth)).status).toBe(200);
  });
});

describe('tenant isolation', () => {
  it("another tenant's subscription is a 404 on get, delete, test and enable", async () => {
    for (const [method, path] of idRoutes(id)) {
      const res = await call(method, path, stranger.auth);
      expect([method, path, res.status]).toEqual([method, path, 404]);
      expect(res.body.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'resource_not_found',
      });
    }
    const mine = await request(ctx.app)
      .get(`/api/v1/webhooks/${id}`)
      .set('Authorization', owner.auth);
    expect(mine.status).toBe(200);
    expect(mine.body.is_active).toBe(true);
  });

  it("another tenant's list does not show it, and a cursor does not cross tenants", async () => {
    for (let i = 0; i < 2; i++) await call('post', '/api/v1/webhooks', owner.auth);
    const theirs = await call('get', '/api/v1/webhooks', stranger.auth);
    expect(theirs.body).toEqual({ data: [], has_more: false, cursor: null });
    const page = await call('get', '/api/v1/webhooks?limit=1', owner.auth);
    expect(page.body.cursor).toEqual(expect.any(String));
    const stolen = await call(
      'get',
      `/api/v1/webhooks?cursor=${encodeURIComponent(page.body.cursor)}`,
      stranger.auth,
    );
    expect(stolen.status).toBe(400);
    expect(stolen.body.error.code).toBe('invalid_cursor');
  });
});

describe('path ids', () => {
  it.each(['not-a-uuid', 'rcp_123', '123', 'urn:uuid:6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f'])(
    '%j → 400 invalid_parameter naming id',
    async (bad) => {
      for (const [method, path] of idRoutes(encodeURIComponent(bad))) {
        const res = await call(method, path, owner.auth);
        expect([method, path, res.status]).toEqual([method, path, 400]);
        expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'id' });
      }
    },
  );

  it('a well-formed unknown id → 404', async () => {
    for (const [method, path] of idRoutes('6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f')) {
      const res = await call(method, path, owner.auth);
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
  });

  it('ids are case-insensitive UUIDs', async () => {
    const res = await call('get', `/api/v1/webhooks/${id.toUpperCase()}`, owner.auth);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(id);
  });
});
