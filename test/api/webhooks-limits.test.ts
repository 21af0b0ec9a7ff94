import request from 'supertest';
import { createTestContext, type TestContext } from '../support/context';

// At most WEBHOOK_MAX_SUBSCRIPTIONS_PER_TENANT subscriptions per tenant (docs/API.md,
// Webhooks; default 100, 3 here): one more is a 409 limit_exceeded, also when creates race.
const MAX = 3;
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ WEBHOOK_MAX_SUBSCRIPTIONS_PER_TENANT: String(MAX) });
});
afterAll(() => ctx.close());

const create = (auth: string, n = 0) =>
  request(ctx.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: `https://127.0.0.1:9/hooks/${n}` });
const countOf = async (tenantId: string) =>
  Number(
    (await ctx.deps.knex('webhook_subscriptions').where({ tenant_id: tenantId }).count('*'))[0]
      ?.count,
  );

describe('the per-tenant subscription limit', () => {
  it('the subscription over the limit is a 409 limit_exceeded; deleting one makes room', async () => {
    const { auth, tenantId } = await ctx.tenant(['admin']);
    const ids: string[] = [];
    for (let i = 0; i < MAX; i++) {
      const res = await create(auth, i);
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const over = await create(auth, MAX);
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'limit_exceeded',
    });
    expect(over.body.error.message).toContain(String(MAX));
    expect(await countOf(tenantId)).toBe(MAX);

    // Another tenant has a limit of its own.
    const other = await ctx.tenant(['admin']);
    expect((await create(other.auth)).status).toBe(201);

    // Disabled subscriptions count (they can be enabled again); a deleted one does not.
    await ctx.deps.knex('webhook_subscriptions').where({ id: ids[0] }).update({ is_active: false });
    expect((await create(auth)).status).toBe(409);
    const del = await request(ctx.app)
      .delete(`/api/v1/webhooks/${ids[0]}`)
      .set('Authorization', auth);
    expect(del.status).toBe(204);
    expect((await create(auth)).status).toBe(201);
  });

  it('creates racing at the limit: exactly one passes', async () => {
    const { auth, tenantId } = await ctx.tenant(['admin']);
    for (let i = 0; i < MAX - 1; i++) expect((await create(auth, i)).status).toBe(201);
    const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => create(auth, 10 + i)));
    const statuses = racing.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    expect(await countOf(tenantId)).toBe(MAX);
  });
});
