import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';

let ctx: TestContext;
let auth: string;
beforeAll(async () => {
  ctx = await createTestContext();
  ({ auth } = await ctx.tenant(['admin']));
});
afterAll(() => ctx.close());

const expectError = (res: request.Response, status: number, type: string, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.error).toMatchObject({ type, code });
  expect(typeof res.body.error.message).toBe('string');
  // Where the code is documented: its anchor in docs/API.md (error-codes-doc.test.ts checks it).
  expect(res.body.error.doc_url).toBe(`docs/API.md#error-${code}`);
  expect(res.body.request_id).toBe(res.headers['x-request-id']);
  expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+|stack/i);
};

describe('request id', () => {
  it('is on every response, success or error, and unique', async () => {
    const a = await request(ctx.app).get('/healthz');
    const b = await request(ctx.app).get('/nope');
    expect(a.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
    expect(b.headers['x-request-id']).toMatch(/^req_/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});

describe('error classes', () => {
  it('unknown route → 404 route_not_found', async () => {
    expectError(
      await request(ctx.app).get('/api/v1/nothing-here'),
      404,
      'invalid_request_error',
      'route_not_found',
    );
  });

  it('wrong method on a known path → 405 with Allow', async () => {
    const res = await request(ctx.app).delete('/api/v1/receptionists').set('Authorization', auth);
    expectError(res, 405, 'invalid_request_error', 'method_not_allowed');
    expect(res.headers.allow).toContain('GET');
  });

  it('unknown resource → 404 resource_not_found', async () => {
    const res = await request(ctx.app)
      .get('/api/v1/receptionists/rcp_00000000000000000000000000000000')
      .set('Authorization', auth);
    expectError(res, 404, 'invalid_request_error', 'resource_not_found');
  });

  it('bad path parameter → 400 invalid_parameter naming it', async () => {
    const res = await request(ctx.app)
      .get('/api/v1/receptionists/not-an-id')
      .set('Authorization', auth);
    expectError(res, 400, 'invalid_request_error', 'invalid_parameter');
    expect(res.body.error.param).toBe('id');
  });

  it.each([
    ['0'],
    ['101'],
    ['1.5'],
    ['abc'],
    [''],
    ['0x10'],
    ['0b11'],
    ['1e2'],
    ['%2B7'],
    ['%205'],
    ['5%20'],
  ])('limit=%j → 400', async (limit) => {
    const res = await request(ctx.app)
      .get(`/api/v1/receptionists?limit=${limit}`)
      .set('Authorization', auth);
    expectError(res, 400, 'invalid_request_error', 'invalid_parameter');
    expect(res.body.error.param).toBe('limit');
  });

  it('limit=007 is 7: digits only, leading zeros allowed', async () => {
    const res = await request(ctx.app)
      .get('/api/v1/receptionists?limit=007')
      .set('Authorization', auth);
    expect(res.status).toBe(200);
  });

  it('a tampered cursor → 400 invalid_cursor', async () => {
    const res = await request(ctx.app)
      .get('/api/v1/receptionists?cursor=abc.def')
      .set('Authorization', auth);
    expectError(res, 400, 'invalid_request_error', 'invalid_cursor');
  });

  it('a path that is not valid percent-encoding → 400, not 500', async () => {
    const res = await request(ctx.app)
      .get('/api/v1/receptionists/%E0%A4%A')
      .set('Authorization', auth);
    expectError(res, 400, 'invalid_request_error', 'invalid_path');
  });

  it('a JSON body that is not an object → 400 naming the body', async () => {
    const res = await request(ctx.app)
      .patch('/api/v1/receptionists/rcp_0000000000')
      .set('Authorization', auth)
      .set('Content-Type', 'application/json')
      .send('[]');
    expectError(res, 400, 'invalid_request_error', 'invalid_parameter');
  });

  it('unknown query parameters are ignored', async () => {
    const res = await request(ctx.app)
      .get('/api/v1/receptionists?foo=bar')
      .set('Authorization', auth);
    expect(res.status).toBe(200);
  });
});

describe('/v1 alias', () => {
  it('answers the same routes', async () => {
    const a = await request(ctx.app).get('/api/v1/receptionists').set('Authorization', auth);
    const b = await request(ctx.app).get('/v1/receptionists').set('Authorization', auth);
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
  });
});

describe('health', () => {
  it('/healthz is unauthenticated and up', async () => {
    const res = await request(ctx.app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/readyz says Postgres and Redis answer', async () => {
    const res = await request(ctx.app).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ready' });
  });
});

describe('openapi', () => {
  it('serves an OpenAPI 3.1 document listing the routes', async () => {
    const res = await request(ctx.app).get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.paths['/receptionists'].get).toBeDefined();
    expect(res.body.paths['/receptionists/{id}'].get.parameters[0]).toMatchObject({
      name: 'id',
      in: 'path',
    });
  });
});
