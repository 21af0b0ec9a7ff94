import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';
import { fakeLookup } from '../support/webhooks';
import { dereferenced } from '../support/openapi-doc';
import { addReceptionist } from '../support/receptionist';

// PATCH /receptionists/{id}: ordinary fields with write, webhook_url with admin under the
// subscription URL policy (here with WEBHOOK_ALLOW_PRIVATE_TARGETS=false and a fake resolver,
// so nothing touches the network), tenant isolation, and no secret in any answer.
const lookup = fakeLookup({
  'hooks.example.test': ['93.184.215.14'],
  'internal.example.test': ['10.1.2.3'],
});

const READ_KEYS = [
  'assistant_id',
  'created_at',
  'error',
  'greeting',
  'id',
  'name',
  'phone_number',
  'plan',
  'provisioned_at',
  'status',
  'webhook_url',
];
const PUBLIC_URL = 'https://hooks.example.test/legacy';

let ctx: TestContext;
let owner: { tenantId: string; auth: string };
let writer: string;
let reader: string;
let rcpId: string;

beforeAll(async () => {
  ctx = await createTestContext(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' },
    { webhookLookup: lookup },
  );
  owner = await ctx.tenant(['admin']);
  writer = (await ctx.keyFor(owner.tenantId, ['write'])).auth;
  reader = (await ctx.keyFor(owner.tenantId, ['read'])).auth;
  rcpId = await addReceptionist(ctx, owner.tenantId, {
    name: 'Front desk',
    phoneNumber: '+15551230000',
    greeting: 'Hello!',
  });
});
afterAll(() => ctx.close());

const patch = (body: unknown, auth: string, id = rcpId) =>
  request(ctx.app)
    .patch(`/api/v1/receptionists/${id}`)
    .set('Authorization', auth)
    .send(body as object);
const get = (auth = owner.auth) =>
  request(ctx.app).get(`/api/v1/receptionists/${rcpId}`).set('Authorization', auth);

describe('ordinary fields (write)', () => {
  it('a write key updates name and greeting: 200 with the read shape', async () => {
    const res = await patch({ name: 'Reception', greeting: 'Good morning' }, writer);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(READ_KEYS);
    expect(res.body).toMatchObject({
      id: rcpId,
      name: 'Reception',
      greeting: 'Good morning',
      status: 'ready',
      phone_number: '+15551230000',
      webhook_url: null,
    });
    expect((await get()).body).toEqual(res.body);
  });

  it('omitted fields are kept and greeting may be cleared with null', async () => {
    const res = await patch({ greeting: null }, writer);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Reception', greeting: null });
  });

  it('a read key gets 403 insufficient_scope', async () => {
    const res = await patch({ name: 'Nope' }, reader);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'insufficient_scope' });
    expect((await get()).body.name).toBe('Reception');
  });

  it.each<[string, unknown, string]>([
    ['an empty body', {}, 'body'],
    ['an unknown field', { name: 'X', nickname: 'Y' }, 'nickname'],
    ['an empty name', { name: '' }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name'],
    ['a null name', { name: null }, 'name'],
    ['a greeting over 1000 characters', { greeting: 'g'.repeat(1001) }, 'greeting'],
    ['a numeric greeting', { greeting: 42 }, 'greeting'],
  ])('%s → 400 invalid_parameter', async (_what, body, param) => {
    const res = await patch(body, owner.auth);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param });
  });

  it('a body without JSON content (no body at all) → 400', async () => {
    const res = await request(ctx.app)
      .patch(`/api/v1/receptionists/${rcpId}`)
      .set('Authorization', owner.auth);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_parameter');
  });

  it('the longest name and greeting are accepted', async () => {
    const res = await patch({ name: 'n'.repeat(200), greeting: 'g'.repeat(1000) }, writer);
    expect(res.status).toBe(200);
    await patch({ name: 'Reception', greeting: null }, writer);
  });
});

describe('webhook_url (admin)', () => {
  it('an admin key sets it: 200, and GET shows it', async () => {
    const res = await patch({ webhook_url: PUBLIC_URL }, owner.auth);
    expect(res.status).toBe(200);
    expect(res.body.webhook_url).toBe(PUBLIC_URL);
    expect((await get()).body.webhook_url).toBe(PUBLIC_URL);
  });

  it.each<[string, unknown]>([
    ['setting', 'https://hooks.example.test/other'],
    ['clearing', null],
  ])('%s it with a write key → 403 naming admin, nothing changed', async (_what, value) => {
    const res = await patch({ name: 'Changed', webhook_url: value }, writer);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'insufficient_scope' });
    expect(res.body.error.message).toMatch(/\badmin\b/);
    expect((await get()).body).toMatchObject({ name: 'Reception', webhook_url: PUBLIC_URL });
  });

  it.each<[string, RegExp]>([
    ['http://hooks.example.test/legacy', /^webhook_url must use https$/],
    ['https://user:pass@hooks.example.test/legacy', /^webhook_url must not contain user-info$/],
    ['not a url', /^webhook_url is not an absolute URL$/],
    ['https://10.0.0.1/legacy', /^webhook_url must point to a public address/],
    ['https://127.0.0.1/legacy', /^webhook_url must point to a public address/],
    ['https://[::1]/legacy', /^webhook_url must point to a public address/],
    ['https://169.254.169.254/latest/meta-data/', /^webhook_url must point to a public address/],
    ['https://internal.example.test/legacy', /^webhook_url must point to a public address/],
    ['https://nowhere.example.test/legacy', /^webhook_url must point to a public address/],
    [`https://hooks.example.test/${'p'.repeat(2048)}`, /2048/],
  ])('%s → 400 invalid_parameter on webhook_url', async (url, message) => {
    const res = await patch({ webhook_url: url }, owner.auth);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'webhook_url' });
    expect(res.body.error.message).toMatch(message);
    expect((await get()).body.webhook_url).toBe(PUBLIC_URL);
  });

  it('a non-string webhook_url → 400 on webhook_url', async () => {
    const res = await patch({ webhook_url: 7 }, owner.auth);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'webhook_url' });
  });

  it('null clears it', async () => {
    const res = await patch({ webhook_url: null }, owner.auth);
    expect(res.status).toBe(200);
    expect(res.body.webhook_url).toBeNull();
    expect((await get()).body.webhook_url).toBeNull();
  });

  it('name and webhook_url together with an admin key', async () => {
    const res = await patch({ name: 'Desk', webhook_url: PUBLIC_URL }, owner.auth);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Desk', webhook_url: PUBLIC_URL });
  });
});

describe('tenant isolation and ids', () => {
  it("another tenant's receptionist → 404, and it is left alone", async () => {
    const stranger = await ctx.tenant(['admin']);
    for (const body of [{ name: 'Hijacked' }, { webhook_url: 'https://hooks.example.test/x' }]) {
      const res = await patch(body, stranger.auth);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'resource_not_found', param: 'id' });
    }
    expect((await get()).body).toMatchObject({ name: 'Desk', webhook_url: PUBLIC_URL });
  });

  it('a well-formed unknown id → 404; a malformed one → 400 on id', async () => {
    expect((await patch({ name: 'X' }, owner.auth, 'rcp_doesnotexist')).status).toBe(404);
    const bad = await patch({ name: 'X' }, owner.auth, 'call_123');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_parameter', param: 'id' });
  });
});

describe('the legacy signing secret', () => {
  it('is never in a PATCH, GET or list answer', async () => {
    // As the worker leaves it after the first delivery: generated, encrypted, stored.
    const sealed = ctx.deps.secretBox.encrypt('whsec_legacy-secret-under-test', 'ctx');
    await ctx.deps
      .knex('receptionists')
      .where({ id: rcpId })
      .update({ webhook_secret_ciphertext: sealed });
    const answers = [
      await patch({ greeting: 'Hi' }, owner.auth),
      await patch({ webhook_url: PUBLIC_URL }, owner.auth),
      await get(),
      await request(ctx.app).get('/api/v1/receptionists').set('Authorization', owner.auth),
    ];
    for (const res of answers) {
      expect(res.status).toBe(200);
      const text = JSON.stringify(res.body);
      expect(text).not.toMatch(/secret|whsec_/i);
      expect(text).not.toContain(sealed);
    }
    expect(Object.keys(answers[2]?.body as object).sort()).toEqual(READ_KEYS);
  });
});

describe('OpenAPI', () => {
  it('documents PATCH with scope write, the body schema and the read shape', async () => {
    const doc = dereferenced((await request(ctx.app).get('/api/v1/openapi.json')).body);
    const op = doc.paths['/receptionists/{id}'].patch;
    expect(op['x-required-scope']).toBe('write');
    const body = op.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties).sort()).toEqual(['greeting', 'name', 'webhook_url']);
    expect(body.additionalProperties).toBe(false);
    const read = op.responses['200'].content['application/json'].schema;
    expect(Object.keys(read.properties).sort()).toEqual(READ_KEYS);
  });
});
