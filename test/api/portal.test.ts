import request from 'supertest';
import { newTimeOrderedId } from '@switchboard/db';
import { emit } from '@switchboard/events';
import { createTestContext, type TestContext } from '../support/context';

// Tenant portal sessions (docs/API.md, Tenant portal): links, the one-use code, portal tokens
// held to their capabilities, tenant and subscriptions, revocation and expiry.
let ctx: TestContext;
let owner: { tenantId: string; auth: string };
let stranger: { tenantId: string; auth: string };
let mine: string;
let other: string;
let foreign: string;

const api = () => request(ctx.app);
const subscribe = async (auth: string): Promise<string> =>
  (
    await api()
      .post('/api/v1/webhooks')
      .set('Authorization', auth)
      .send({ url: 'https://127.0.0.1:9/hook' })
      .expect(201)
  ).body.id as string;

/** A session of `owner` and its token. */
async function portal(body: object = {}): Promise<{ id: string; token: string; auth: string }> {
  const created = await api()
    .post('/api/v1/portal/sessions')
    .set('Authorization', owner.auth)
    .send(body)
    .expect(201);
  const code = new URL(created.body.url).hash.replace('#code=', '');
  const traded = await api().post('/api/v1/portal/exchange').send({ code }).expect(200);
  return { id: created.body.id, token: traded.body.token, auth: `Bearer ${traded.body.token}` };
}

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await ctx.tenant(['admin']);
  stranger = await ctx.tenant(['admin']);
  mine = await subscribe(owner.auth);
  other = await subscribe(owner.auth);
  foreign = await subscribe(stranger.auth);
});
afterAll(() => ctx.close());

describe('sessions', () => {
  it('makes a link with a one-use code; view is always granted; defaults as documented', async () => {
    const sent = Date.now();
    const res = await api()
      .post('/api/v1/portal/sessions')
      .set('Authorization', owner.auth)
      .send({})
      .expect(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^ps_/),
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/portal#code=pc_[0-9a-f]{64}$/),
      expires_at: expect.any(String),
      capabilities: ['view', 'manage_endpoints', 'recover'],
    });
    // An hour from when the server made it: between the request's sending and its answer
    // (however slow the machine), with a second for the clock's rounding.
    const expires = Date.parse(res.body.expires_at);
    expect(expires).toBeGreaterThanOrEqual(sent + 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    const code = res.body.url.split('#code=')[1];
    const first = await api().post('/api/v1/portal/exchange').send({ code }).expect(200);
    expect(first.body).toMatchObject({
      token: expect.stringMatching(/^pt_[0-9a-f]{64}$/),
      capabilities: ['view', 'manage_endpoints', 'recover'],
      subscription_ids: null,
    });
    expect(first.body.tenant_name).toEqual(expect.any(String));
    const again = await api().post('/api/v1/portal/exchange').send({ code }).expect(401);
    expect(again.body.error.code).toBe('invalid_portal_code');
    const stored = await ctx.deps.knex('portal_sessions').where({ id: res.body.id }).first();
    expect(JSON.stringify(stored)).not.toContain(code);
    expect(JSON.stringify(stored)).not.toContain(first.body.token);
  });

  it.each([
    [{ capabilities: ['view', 'fly'] }, 'capabilities'],
    [{ capabilities: [] }, 'capabilities'],
    [{ ttl_seconds: 299 }, 'ttl_seconds'],
    [{ ttl_seconds: 86401 }, 'ttl_seconds'],
    [{ subscription_ids: ['nope'] }, 'subscription_ids[0]'],
    [{ extra: 1 }, 'extra'],
  ])('refuses %j with 400', async (body, param) => {
    const res = await api()
      .post('/api/v1/portal/sessions')
      .set('Authorization', owner.auth)
      .send(body)
      .expect(400);
    expect(res.body.error.code).toBe('invalid_parameter');
    expect(String(res.body.error.param)).toContain(param.split('[')[0]);
  });

  it('refuses another tenant’s subscription in subscription_ids as missing (404)', async () => {
    const res = await api()
      .post('/api/v1/portal/sessions')
      .set('Authorization', owner.auth)
      .send({ subscription_ids: [foreign] })
      .expect(404);
    expect(res.body.error.param).toBe('subscription_ids');
  });

  it('needs an admin key to create or revoke', async () => {
    const write = await ctx.keyFor(owner.tenantId, ['write']);
    const res = await api()
      .post('/api/v1/portal/sessions')
      .set('Authorization', write.auth)
      .send({})
      .expect(403);
    expect(res.body.error.code).toBe('insufficient_scope');
  });

  it('an unknown code is 401 invalid_portal_code', async () => {
    const res = await api()
      .post('/api/v1/portal/exchange')
      .send({ code: 'pc_' + '0'.repeat(64) })
      .expect(401);
    expect(res.body.error.code).toBe('invalid_portal_code');
  });
});

describe('portal tokens', () => {
  it('work on the webhook routes of their capabilities, for their tenant only', async () => {
    const { auth } = await portal();
    const list = await api().get('/api/v1/webhooks').set('Authorization', auth).expect(200);
    expect(list.body.data.map((s: { id: string }) => s.id).sort()).toEqual([mine, other].sort());
    await api().get(`/api/v1/webhooks/${mine}`).set('Authorization', auth).expect(200);
    await api().get(`/api/v1/webhooks/${mine}/stats`).set('Authorization', auth).expect(200);
    await api().get(`/api/v1/webhooks/${foreign}`).set('Authorization', auth).expect(404);
    for (const path of ['/api/v1/calls', '/api/v1/usage', '/api/v1/receptionists']) {
      const res = await api().get(path).set('Authorization', auth).expect(403);
      expect(res.body.error.code).toBe('insufficient_scope');
    }
    // A portal token cannot make more portal links.
    const res = await api()
      .post('/api/v1/portal/sessions')
      .set('Authorization', auth)
      .send({})
      .expect(403);
    expect(res.body.error.code).toBe('insufficient_scope');
  });

  it('view only: every write is 403 and changes nothing', async () => {
    const { auth } = await portal({ capabilities: ['view'] });
    await api().get(`/api/v1/webhooks/${mine}/deliveries`).set('Authorization', auth).expect(200);
    const writes = [
      api().post('/api/v1/webhooks').send({ url: 'https://127.0.0.1:9/x' }),
      api().delete(`/api/v1/webhooks/${mine}`),
      api().post(`/api/v1/webhooks/${mine}/test`),
      api().post(`/api/v1/webhooks/${mine}/enable`),
    ];
    for (const write of writes) {
      const res = await write.set('Authorization', auth);
      expect([res.status, res.body.error?.code]).toEqual([403, 'insufficient_scope']);
    }
    await api().get(`/api/v1/webhooks/${mine}`).set('Authorization', owner.auth).expect(200);
  });

  it('the self-service routes need their capability; the catalog is for every session', async () => {
    const view = (await portal({ capabilities: ['view'] })).auth;
    const byDefault = (await portal()).auth; // view, manage_endpoints, recover
    const secrets = (await portal({ capabilities: ['manage_secrets'] })).auth;
    const limited = (await portal({ capabilities: ['manage_secrets'], subscription_ids: [mine] }))
      .auth;
    const refused = async (req: request.Test, auth: string) => {
      const res = await req.set('Authorization', auth);
      expect([res.status, res.body.error?.code]).toEqual([403, 'insufficient_scope']);
    };
    const since = new Date(Date.now() - 60_000).toISOString();
    const hook = `/api/v1/webhooks/${mine}`;
    await refused(api().patch(hook).send({ description: 'x' }), view);
    await refused(api().post(`${hook}/rotate-secret`).send({}), byDefault);
    await refused(api().post(`${hook}/recover`).send({ since }), view);
    await refused(api().post(`/api/v1/webhooks/${other}/rotate-secret`).send({}), limited);

    await api()
      .patch(hook)
      .set('Authorization', byDefault)
      .send({ description: 'CRM' })
      .expect(200);
    const rotated = await api()
      .post(`${hook}/rotate-secret`)
      .set('Authorization', secrets)
      .send({ overlap_seconds: 60 })
      .expect(200);
    expect(rotated.body.signing_secret).toMatch(/^whsec_/);
    const rec = await api().post(`${hook}/recover`).set('Authorization', byDefault).send({ since });
    expect(rec.status).toBe(202);
    await api()
      .get(`${hook}/recoveries/${rec.body.id}`)
      .set('Authorization', byDefault)
      .expect(200);
    await refused(api().get(`${hook}/recoveries/${rec.body.id}`), view);
    for (const auth of [view, limited]) {
      const catalog = await api().get('/api/v1/event-types').set('Authorization', auth).expect(200);
      expect(catalog.body.data.length).toBeGreaterThan(0);
    }
  });

  it('limited to some subscriptions: lists only them, 403 on the others', async () => {
    const { auth } = await portal({ subscription_ids: [mine.toUpperCase()] });
    const list = await api().get('/api/v1/webhooks').set('Authorization', auth).expect(200);
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([mine]);
    await api().get(`/api/v1/webhooks/${mine}`).set('Authorization', auth).expect(200);
    const res = await api().get(`/api/v1/webhooks/${other}`).set('Authorization', auth).expect(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    await api().get(`/api/v1/webhooks/${foreign}`).set('Authorization', auth).expect(404);
    const create = await api()
      .post('/api/v1/webhooks')
      .set('Authorization', auth)
      .send({ url: 'https://127.0.0.1:9/x' })
      .expect(403);
    expect(create.body.error.code).toBe('insufficient_scope');
  });

  it('a revoked session’s token is refused from the next request (401)', async () => {
    const { id, auth } = await portal();
    await api().get('/api/v1/webhooks').set('Authorization', auth).expect(200);
    await api()
      .delete(`/api/v1/portal/sessions/${id}`)
      .set('Authorization', owner.auth)
      .expect(204);
    const res = await api().get('/api/v1/webhooks').set('Authorization', auth).expect(401);
    expect(res.body.error.code).toBe('invalid_portal_token');
    // Another tenant cannot revoke it: 404 as for a missing one.
    await api()
      .delete(`/api/v1/portal/sessions/${id}`)
      .set('Authorization', stranger.auth)
      .expect(404);
  });

  it('an expired session’s token and code are refused (401)', async () => {
    const created = await api()
      .post('/api/v1/portal/sessions')
      .set('Authorization', owner.auth)
      .send({})
      .expect(201);
    const { auth, id } = await portal();
    await ctx.deps
      .knex('portal_sessions')
      .whereIn('id', [id, created.body.id])
      .update({ expires_at: ctx.deps.knex.raw("now() - interval '1 second'") });
    const res = await api().get('/api/v1/webhooks').set('Authorization', auth).expect(401);
    expect(res.body.error.code).toBe('invalid_portal_token');
    const code = created.body.url.split('#code=')[1];
    await api().post('/api/v1/portal/exchange').send({ code }).expect(401);
  });
});

describe('delivery health (stats)', () => {
  it('counts deliveries per minute by outcome and the attempts’ p50/p99, over 24 hours', async () => {
    const knex = ctx.deps.knex;
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 120_000);
    const at = (s: number) => new Date(minute.getTime() + s * 1000);
    const rows: Array<[string, string, number[]]> = [
      ['succeeded', 'a', [10]],
      ['succeeded', 'b', [20]],
      ['failed', 'c', [30, 40, 1000]],
      // Older than 24 hours: not counted.
      ['succeeded', 'old', [5]],
    ];
    for (const [status, tag, durations] of rows) {
      const when = tag === 'old' ? new Date(Date.now() - 25 * 3600_000) : at(5);
      await knex('events').insert({
        id: `evt_stats${tag}${mine.slice(0, 8)}`,
        tenant_id: owner.tenantId,
        type: 'call.completed',
        data: {},
        created_at: when,
      });
      // As the worker keeps them: the latest attempt on the delivery row, the ones before it
      // as attempt rows.
      const statusCode = status === 'succeeded' ? 200 : 500;
      await knex('webhook_deliveries').insert({
        id: `dlv_stats${tag}${mine.slice(0, 8)}`,
        tenant_id: owner.tenantId,
        event_id: `evt_stats${tag}${mine.slice(0, 8)}`,
        subscription_id: mine,
        status,
        attempts: durations.length,
        created_at: when,
        completed_at: when,
        latest_round: 1,
        latest_attempt: durations.length,
        latest_status_code: statusCode,
        latest_duration_ms: durations.at(-1),
        latest_attempted_at: when,
      });
      const superseded = durations.slice(0, -1);
      if (superseded.length > 0) {
        await knex('webhook_delivery_attempts').insert(
          superseded.map((d, i) => ({
            delivery_id: `dlv_stats${tag}${mine.slice(0, 8)}`,
            round: 1,
            attempt: i + 1,
            status_code: statusCode,
            duration_ms: d,
            attempted_at: when,
          })),
        );
      }
    }
    const res = await api()
      .get(`/api/v1/webhooks/${mine}/stats`)
      .set('Authorization', owner.auth)
      .expect(200);
    // Five attempts in the window: 10, 20, 30, 40, 1000 ms.
    expect(res.body.totals).toEqual({ succeeded: 2, failed: 1, p50_ms: 30, p99_ms: 962 });
    expect(res.body.buckets).toEqual([
      {
        start: minute.toISOString(),
        succeeded: 2,
        failed: 1,
        p50_ms: 30,
        p99_ms: 962,
      },
    ]);
    expect(res.body.bucket_seconds).toBe(60);
    // The other subscription has none of it.
    const empty = await api()
      .get(`/api/v1/webhooks/${other}/stats`)
      .set('Authorization', owner.auth)
      .expect(200);
    expect(empty.body.totals).toEqual({ succeeded: 0, failed: 0, p50_ms: null, p99_ms: null });
    expect(empty.body.buckets).toEqual([]);
  });
});

describe('events (the portal’s event page)', () => {
  /** An event of `tenantId`, as emit() writes it; delivered to `subscriptionId` when given. */
  async function event(tenantId: string, subscriptionId?: string): Promise<string> {
    const id = await emit(ctx.deps.knex, {
      tenantId,
      type: 'usage.threshold',
      data: {
        threshold: 80,
        minutes_used: 80,
        minutes_included: 100,
        billing_period_end: '2026-12-01T00:00:00.000Z',
      },
    });
    if (subscriptionId) {
      // The row the fan-out makes (its outcome does not matter here).
      await ctx.deps.knex('webhook_deliveries').insert({
        id: newTimeOrderedId('dlv', new Date()),
        tenant_id: tenantId,
        event_id: id,
        subscription_id: subscriptionId,
        status: 'failed',
      });
    }
    return id;
  }
  const read = (id: string, auth: string) =>
    api().get(`/api/v1/events/${id}`).set('Authorization', auth);

  it('a portal token reads an event delivered to a subscription it sees, and no other (404)', async () => {
    const delivered = await event(owner.tenantId, mine);
    const undelivered = await event(owner.tenantId);
    const theirs = await event(stranger.tenantId, foreign);
    const all = await portal({ capabilities: ['view'] });
    const toMine = await portal({ subscription_ids: [mine] });
    const toOther = await portal({ subscription_ids: [other] });

    for (const session of [all, toMine]) {
      const res = await read(delivered, session.auth).expect(200);
      expect(res.body).toMatchObject({ id: delivered, event: 'usage.threshold' });
    }
    // Not delivered to what the session sees: the same 404 as an unknown id.
    const missing = await read(newTimeOrderedId('evt', new Date()), all.auth).expect(404);
    for (const [id, session] of [
      [delivered, toOther],
      [undelivered, all],
      [theirs, all],
    ] as const) {
      const res = await read(id, session.auth).expect(404);
      expect(res.body.error).toEqual({ ...missing.body.error });
      expect(res.body.error).toMatchObject({ code: 'resource_not_found', param: 'id' });
    }
    // An API key reads every event of its tenant, delivered or not.
    await read(undelivered, owner.auth).expect(200);
  });
});
