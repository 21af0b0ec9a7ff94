import { createDecipheriv } from 'node:crypto';
import request from 'supertest';
import { webhookSecretContext } from '@switchboard/db';
import { createTestContext, type TestContext } from '../support/context';
import { captureLogger, ISO_MS, READ_SHAPE_KEYS, SIGNING_SECRET, UUID } from '../support/webhooks';
import { dereferenced } from '../support/openapi-doc';

// CRUD, the read shape, and the signing secret: shown once, encrypted at rest, never logged.
const logs = captureLogger();
let ctx: TestContext;
let auth: string;
let tenantId: string;
/** Every secret this file saw; the last test greps the logs for all of them. */
const secrets: string[] = [];

beforeAll(async () => {
  ctx = await createTestContext({}, { logger: logs.logger });
  ({ auth, tenantId } = await ctx.tenant(['admin']));
});
afterAll(() => ctx.close());

const URL_A = 'https://127.0.0.1:9/hooks/a';

async function create(body: object, as = auth): Promise<request.Response> {
  const res = await request(ctx.app).post('/api/v1/webhooks').set('Authorization', as).send(body);
  if (typeof res.body.signing_secret === 'string') secrets.push(res.body.signing_secret);
  return res;
}

describe('POST /api/v1/webhooks', () => {
  it('creates a subscription: 201, the read shape, the secret once and the warning', async () => {
    const res = await create({ url: URL_A });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      [...READ_SHAPE_KEYS, '_warning', 'signing_secret'].sort(),
    );
    expect(res.body).toMatchObject({
      url: URL_A,
      events: [],
      description: null,
      is_active: true,
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
      last_delivery_at: null,
      last_success_at: null,
      last_failure_at: null,
      _warning: 'Store this secret now: it is shown only once.',
    });
    expect(res.body.id).toMatch(UUID);
    expect(res.body.signing_secret).toMatch(SIGNING_SECRET);
    expect(res.body.created_at).toMatch(ISO_MS);
    expect(res.body.updated_at).toMatch(ISO_MS);
    expect(res.headers.location).toBe(`/api/v1/webhooks/${res.body.id}`);
  });

  it('keeps events and description, and mints a new secret every time', async () => {
    const a = await create({
      url: URL_A,
      events: ['call.completed', 'sms.received'],
      description: 'CRM',
    });
    const b = await create({ url: URL_A });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({
      events: ['call.completed', 'sms.received'],
      description: 'CRM',
    });
    expect(a.body.signing_secret).not.toBe(b.body.signing_secret);
    expect(a.body.id).not.toBe(b.body.id);
  });
});

describe('GET, DELETE and enable', () => {
  it('GET /webhooks/{id} answers the read shape, without the secret', async () => {
    const created = await create({ url: URL_A, events: ['call.started'], description: 'x' });
    const res = await request(ctx.app)
      .get(`/api/v1/webhooks/${created.body.id}`)
      .set('Authorization', auth);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(READ_SHAPE_KEYS);
    const { signing_secret: _s, _warning: _w, ...readShape } = created.body;
    expect(res.body).toEqual(readShape);
    expect(JSON.stringify(res.body)).not.toContain(created.body.signing_secret);
  });

  it('GET /webhooks pages newest first with {data, has_more, cursor}', async () => {
    const other = await ctx.tenant(['admin']);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ url: URL_A }, other.auth)).body.id);
    // Distinct creation times, so "newest first" has one right answer.
    for (const [i, id] of ids.entries()) {
      await ctx.deps
        .knex('webhook_subscriptions')
        .where({ id })
        .update({ created_at: new Date(Date.UTC(2026, 0, 1 + i)) });
    }
    const first = await request(ctx.app)
      .get('/api/v1/webhooks?limit=2')
      .set('Authorization', other.auth);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['cursor', 'data', 'has_more']);
    expect(first.body.has_more).toBe(true);
    expect(typeof first.body.cursor).toBe('string');
    const second = await request(ctx.app)
      .get(`/api/v1/webhooks?limit=2&cursor=${encodeURIComponent(first.body.cursor)}`)
      .set('Authorization', other.auth);
    expect(second.body).toMatchObject({ has_more: false, cursor: null });
    const listed = [...first.body.data, ...second.body.data];
    expect(listed.map((s: { id: string }) => s.id)).toEqual([...ids].reverse());
    for (const item of listed) expect(Object.keys(item).sort()).toEqual(READ_SHAPE_KEYS);
    const all = JSON.stringify(listed);
    for (const secret of secrets) expect(all).not.toContain(secret);
    expect(all).not.toContain('signing_secret');
  });

  it('DELETE /webhooks/{id} hard-deletes: 204 with no body, then 404', async () => {
    const { id } = (await create({ url: URL_A })).body;
    const res = await request(ctx.app).delete(`/api/v1/webhooks/${id}`).set('Authorization', auth);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await ctx.deps.knex('webhook_subscriptions').where({ id }).first()).toBeUndefined();
    const again = await request(ctx.app)
      .delete(`/api/v1/webhooks/${id}`)
      .set('Authorization', auth);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('resource_not_found');
    const get = await request(ctx.app).get(`/api/v1/webhooks/${id}`).set('Authorization', auth);
    expect(get.status).toBe(404);
  });

  it('POST /webhooks/{id}/enable re-activates and zeroes the failure counter', async () => {
    const { id } = (await create({ url: URL_A })).body;
    await ctx.deps.knex('webhook_subscriptions').where({ id }).update({
      is_active: false,
      consecutive_failures: 20,
      disabled_at: new Date(),
      disabled_reason: 'consecutive_failures',
    });
    const disabled = await request(ctx.app)
      .get(`/api/v1/webhooks/${id}`)
      .set('Authorization', auth);
    expect(disabled.body).toMatchObject({
      is_active: false,
      consecutive_failures: 20,
      disabled_reason: 'consecutive_failures',
    });
    expect(disabled.body.disabled_at).toMatch(ISO_MS);
    const res = await request(ctx.app)
      .post(`/api/v1/webhooks/${id}/enable`)
      .set('Authorization', auth);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(READ_SHAPE_KEYS);
    expect(res.body).toMatchObject({
      id,
      is_active: true,
      consecutive_failures: 0,
      disabled_at: null,
      disabled_reason: null,
    });
  });
});

describe('the signing secret at rest', () => {
  it('is stored only as a ciphertext under key k1 that decrypts to it for this row only', async () => {
    const created = await create({ url: URL_A });
    const { id, signing_secret: secret } = created.body as { id: string; signing_secret: string };
    const row = await ctx.deps.knex('webhook_subscriptions').where({ id }).first();
    expect(row.secret_key_id).toBe('k1');
    expect(row.secret_ciphertext).toMatch(/^v1\.k1\.[A-Za-z0-9_-]+$/);
    const rowText = JSON.stringify(row);
    expect(rowText).not.toContain(secret);
    expect(rowText).not.toContain(secret.slice('whsec_'.length, 30));
    const context = webhookSecretContext(tenantId, id);
    expect(ctx.deps.secretBox.decrypt(row.secret_ciphertext, context)).toBe(secret);
    expect(() => ctx.deps.secretBox.decrypt(row.secret_ciphertext, `${context}x`)).toThrow();

    // Independently: AES-256-GCM under SECRET_ENCRYPTION_KEY, iv | tag | ciphertext.
    const payload = Buffer.from(row.secret_ciphertext.split('.')[2], 'base64url');
    const decipher = createDecipheriv(
      'aes-256-gcm',
      ctx.config.secretEncryptionKey,
      payload.subarray(0, 12),
    );
    decipher.setAAD(Buffer.from(`v1.k1.${context}`));
    decipher.setAuthTag(payload.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(payload.subarray(28)), decipher.final()]);
    expect(plain.toString('utf8')).toBe(secret);
  });

  it('cannot be moved to another row', async () => {
    const a = (await create({ url: URL_A })).body;
    const b = (await create({ url: URL_A })).body;
    const rowA = await ctx.deps.knex('webhook_subscriptions').where({ id: a.id }).first();
    expect(() =>
      ctx.deps.secretBox.decrypt(rowA.secret_ciphertext, webhookSecretContext(tenantId, b.id)),
    ).toThrow();
  });
});

describe('OpenAPI', () => {
  it('documents every webhook route with scope admin and the response schemas', async () => {
    const doc = dereferenced((await request(ctx.app).get('/api/v1/openapi.json')).body);
    const ops = [
      doc.paths['/webhooks'].post,
      doc.paths['/webhooks'].get,
      doc.paths['/webhooks/{id}'].get,
      doc.paths['/webhooks/{id}'].delete,
      doc.paths['/webhooks/{id}/test'].post,
      doc.paths['/webhooks/{id}/enable'].post,
    ];
    for (const op of ops) expect(op['x-required-scope']).toBe('admin');
    const created = doc.paths['/webhooks'].post.responses['201'].content['application/json'];
    expect(created.schema.required).toContain('signing_secret');
    const read = doc.paths['/webhooks/{id}'].get.responses['200'].content['application/json'];
    expect(Object.keys(read.schema.properties).sort()).toEqual(READ_SHAPE_KEYS);
    expect(doc.paths['/webhooks/{id}/test'].post.responses['200']).toBeDefined();
  });
});

describe('logs', () => {
  it('carry the requests but never a secret or its ciphertext', async () => {
    const text = logs.text();
    expect(text).toContain('/api/v1/webhooks');
    expect(secrets.length).toBeGreaterThan(5);
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice('whsec_'.length));
    }
    expect(text).not.toContain('v1.k1.');
  });
});
