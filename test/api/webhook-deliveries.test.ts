import { createServer } from 'node:net';
import request from 'supertest';
import { emit } from '@switchboard/events';
import { newId } from '@switchboard/db';
import { catalog } from '@switchboard/queues';
import { createTestContext, type TestContext } from '../support/context';
import { captureLogger, ISO_MS } from '../support/webhooks';
import { dereferenced } from '../support/openapi-doc';
import { baselineMs, boundMs, timed } from '../support/timing';

// The delivery log and manual retries. The worker does not run here: deliveries and attempts
// are written straight into Postgres, and a retry's job is looked up in the real queue.
let ctx: TestContext;
let owner: { tenantId: string; auth: string };
let stranger: { tenantId: string; auth: string };
let subId: string;

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await ctx.tenant(['admin']);
  stranger = await ctx.tenant(['admin']);
  subId = await subscribe(ctx, owner.auth);
});
afterAll(() => ctx.close());

async function subscribe(c: TestContext, auth: string): Promise<string> {
  const res = await request(c.app)
    .post('/api/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: 'https://127.0.0.1:9/hook' });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

interface SeedAttempt {
  round: number;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  at: Date;
}

/**
 * One event (through emit(), in a transaction) and its delivery, with its attempts kept as
 * the worker keeps them: the latest on the delivery row, the ones before it as attempt rows.
 */
async function seedDelivery(
  c: TestContext,
  opts: {
    tenantId: string;
    subscriptionId: string;
    createdAt: Date;
    id?: string;
    status?: string;
    round?: number;
    attempts?: SeedAttempt[];
    lockedUntil?: Date | null;
  },
): Promise<{ id: string; eventId: string }> {
  const id = opts.id ?? newId('dlv');
  const status = opts.status ?? 'failed';
  const final = ['succeeded', 'failed', 'canceled'].includes(status);
  const seeded = opts.attempts ?? [];
  const round = opts.round ?? 1;
  const latest = seeded.at(-1);
  const excerpt = (a: SeedAttempt) => (a.statusCode ? `body ${a.round}.${a.attempt}` : null);
  const eventId = await c.deps.knex.transaction(async (trx) => {
    const evt = await emit(trx, {
      tenantId: opts.tenantId,
      receptionistId: 'rcp_seed',
      type: 'call.started',
      data: {
        call_id: newId('call'),
        direction: 'inbound',
        from: '+15551230001',
        to: '+15551230002',
        started_at: opts.createdAt.toISOString(),
      },
    });
    await trx('webhook_deliveries').insert({
      id,
      tenant_id: opts.tenantId,
      event_id: evt,
      subscription_id: opts.subscriptionId,
      status,
      round,
      attempts: seeded.filter((a) => a.round === round).length,
      next_attempt_at: final ? null : opts.createdAt,
      locked_until: opts.lockedUntil ?? null,
      created_at: opts.createdAt,
      completed_at: final ? opts.createdAt : null,
      ...(latest && {
        latest_round: latest.round,
        latest_attempt: latest.attempt,
        latest_status_code: latest.statusCode,
        latest_error: latest.error,
        latest_duration_ms: 12,
        latest_response_excerpt: excerpt(latest),
        latest_attempted_at: latest.at,
      }),
    });
    for (const a of seeded.slice(0, -1)) {
      await trx('webhook_delivery_attempts').insert({
        delivery_id: id,
        round: a.round,
        attempt: a.attempt,
        status_code: a.statusCode,
        error: a.error,
        duration_ms: 12,
        response_excerpt: excerpt(a),
        attempted_at: a.at,
      });
    }
    return evt;
  });
  return { id, eventId };
}

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const failedRound = (round: number, start: number): SeedAttempt[] =>
  [1, 2, 3].map((attempt) => ({
    round,
    attempt,
    statusCode: 500,
    error: 'http_error',
    at: at(start + attempt),
  }));

const list = (query = '', auth = owner.auth, id = subId) =>
  request(ctx.app).get(`/api/v1/webhooks/${id}/deliveries${query}`).set('Authorization', auth);
const retry = (deliveryId: string, auth = owner.auth, id = subId) =>
  request(ctx.app)
    .post(`/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`)
    .set('Authorization', auth);

describe('GET /webhooks/{id}/deliveries', () => {
  let shaped: { id: string; eventId: string };
  const expectedOrder: string[] = [];

  beforeAll(async () => {
    // Five deliveries, two of them created in the same millisecond (ties broken by id).
    shaped = await seedDelivery(ctx, {
      tenantId: owner.tenantId,
      subscriptionId: subId,
      createdAt: at(100),
      status: 'succeeded',
      round: 2,
      attempts: [
        ...failedRound(1, 100),
        { round: 2, attempt: 1, statusCode: 200, error: null, at: at(200) },
      ],
    });
    const others = [
      await seedDelivery(ctx, {
        tenantId: owner.tenantId,
        subscriptionId: subId,
        createdAt: at(50),
        id: 'dlv_tieA',
      }),
      await seedDelivery(ctx, {
        tenantId: owner.tenantId,
        subscriptionId: subId,
        createdAt: at(50),
        id: 'dlv_tieB',
      }),
      await seedDelivery(ctx, {
        tenantId: owner.tenantId,
        subscriptionId: subId,
        createdAt: at(10),
        status: 'pending',
      }),
      await seedDelivery(ctx, {
        tenantId: owner.tenantId,
        subscriptionId: subId,
        createdAt: at(300),
        status: 'canceled',
      }),
    ];
    expectedOrder.push(others[3]!.id, shaped.id, 'dlv_tieB', 'dlv_tieA', others[2]!.id);
  });

  it('answers {data, has_more, cursor}, newest first by (created_at, id)', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body.cursor).toBeNull();
    expect(res.body.data.map((d: { id: string }) => d.id)).toEqual(expectedOrder);
  });

  it('pages with small limits without skipping or repeating', async () => {
    for (const limit of [1, 2, 3]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await list(q);
        expect(res.status).toBe(200);
        expect(res.body.data.length).toBeLessThanOrEqual(limit);
        seen.push(...res.body.data.map((d: { id: string }) => d.id));
        expect(res.body.cursor === null).toBe(!res.body.has_more);
        cursor = res.body.cursor as string | null;
        pages++;
      } while (cursor);
      expect(seen).toEqual(expectedOrder);
      expect(pages).toBe(Math.ceil(expectedOrder.length / limit));
    }
  });

  it('shows every attempt of every round, oldest first, with round numbers', async () => {
    const item = (await list()).body.data.find((d: { id: string }) => d.id === shaped.id);
    expect(item).toEqual({
      id: shaped.id,
      subscription_id: subId,
      event_id: shaped.eventId,
      event_type: 'call.started',
      status: 'succeeded',
      round: 2,
      attempts: [
        ...[1, 2, 3].map((attempt) => ({
          round: 1,
          attempt,
          status_code: 500,
          error: 'http_error',
          duration_ms: 12,
          response_excerpt: `body 1.${attempt}`,
          attempted_at: at(100 + attempt).toISOString(),
        })),
        {
          round: 2,
          attempt: 1,
          status_code: 200,
          error: null,
          duration_ms: 12,
          response_excerpt: 'body 2.1',
          attempted_at: at(200).toISOString(),
        },
      ],
      next_attempt_at: null,
      created_at: at(100).toISOString(),
      completed_at: at(100).toISOString(),
    });
    const pending = (await list()).body.data.at(-1);
    expect(pending).toMatchObject({ status: 'pending', attempts: [], completed_at: null });
    expect(pending.next_attempt_at).toMatch(ISO_MS);
  });

  it('limit is validated and a cursor of another list is refused', async () => {
    for (const bad of ['0', '101', 'x']) {
      const res = await list(`?limit=${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'limit' });
    }
    await subscribe(ctx, owner.auth);
    const subs = await request(ctx.app)
      .get('/api/v1/webhooks?limit=1')
      .set('Authorization', owner.auth);
    const foreign = await list(`?cursor=${encodeURIComponent(subs.body.cursor)}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('invalid_cursor');
  });

  it('an empty log is an empty page', async () => {
    const other = await subscribe(ctx, owner.auth);
    expect((await list('', owner.auth, other)).body).toEqual({
      data: [],
      has_more: false,
      cursor: null,
    });
  });
});

describe('POST /webhooks/{id}/deliveries/{delivery_id}/retry', () => {
  it('202: a fresh round, the row back to pending, the job for attempt 1 queued', async () => {
    const d = await seedDelivery(ctx, {
      tenantId: owner.tenantId,
      subscriptionId: subId,
      createdAt: at(400),
      attempts: failedRound(1, 400),
    });
    const res = await retry(d.id);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      id: d.id,
      event_id: d.eventId,
      event_type: 'call.started',
      status: 'pending',
      round: 2,
      completed_at: null,
    });
    expect(res.body.next_attempt_at).toMatch(ISO_MS);
    expect(res.body.attempts).toHaveLength(3); // the history of round 1 is kept

    const row = await ctx.deps.knex('webhook_deliveries').where({ id: d.id }).first();
    expect(row).toMatchObject({ status: 'pending', round: 2, attempts: 0, completed_at: null });
    const job = await ctx.queues.deliveries.getJob(
      catalog.deliveries.jobId({ v: 1, deliveryId: d.id, round: 2, attempt: 1 }),
    );
    // It names its lanes and its tenant's turn in the queue
    // (docs/decisions/0045-tenants-take-turns.md).
    expect(job?.data).toEqual({
      v: 1,
      deliveryId: d.id,
      round: 2,
      attempt: 1,
      tenantId: owner.tenantId,
      targetId: subId,
    });
    expect(job?.opts.priority).toBeGreaterThan(0);

    const again = await retry(d.id);
    expect(again.status).toBe(202);
    expect(again.body.round).toBe(3);
    const next = await ctx.queues.deliveries.getJob(
      catalog.deliveries.jobId({ v: 1, deliveryId: d.id, round: 3, attempt: 1 }),
    );
    expect(next?.data).toMatchObject({ v: 1, deliveryId: d.id, round: 3, attempt: 1 });
  });

  it('works on succeeded and pending deliveries too', async () => {
    for (const status of ['succeeded', 'pending', 'canceled']) {
      const d = await seedDelivery(ctx, {
        tenantId: owner.tenantId,
        subscriptionId: subId,
        createdAt: at(500),
        status,
      });
      const res = await retry(d.id);
      expect([status, res.status, res.body.status]).toEqual([status, 202, 'pending']);
    }
  });

  it('an attempt in flight → 409 delivery_in_progress; once its claim lapsed → 202', async () => {
    const busy = await seedDelivery(ctx, {
      tenantId: owner.tenantId,
      subscriptionId: subId,
      createdAt: at(600),
      status: 'delivering',
      lockedUntil: new Date(Date.now() + 60_000),
    });
    const res = await retry(busy.id);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'delivery_in_progress',
    });
    await ctx.deps
      .knex('webhook_deliveries')
      .where({ id: busy.id })
      .update({ locked_until: new Date(Date.now() - 1000) });
    expect((await retry(busy.id)).status).toBe(202);
  });

  it('a disabled subscription → 409 subscription_disabled; after enable → 202', async () => {
    const sub = await subscribe(ctx, owner.auth);
    const d = await seedDelivery(ctx, {
      tenantId: owner.tenantId,
      subscriptionId: sub,
      createdAt: at(700),
      attempts: failedRound(1, 700),
    });
    await ctx.deps.knex('webhook_subscriptions').where({ id: sub }).update({
      is_active: false,
      disabled_at: new Date(),
      disabled_reason: 'consecutive_failures',
      consecutive_failures: 20,
    });
    const res = await retry(d.id, owner.auth, sub);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'subscription_disabled',
    });
    expect(res.body.error.message).toMatch(/enable it first/);
    const row = await ctx.deps.knex('webhook_deliveries').where({ id: d.id }).first();
    expect(row).toMatchObject({ status: 'failed', round: 1, attempts: 3 });

    const enabled = await request(ctx.app)
      .post(`/api/v1/webhooks/${sub}/enable`)
      .set('Authorization', owner.auth);
    expect(enabled.status).toBe(200);
    expect((await retry(d.id, owner.auth, sub)).status).toBe(202);
  });

  it("a delivery that is not this subscription's → 404 on delivery_id", async () => {
    const sub = await subscribe(ctx, owner.auth);
    const elsewhere = await seedDelivery(ctx, {
      tenantId: owner.tenantId,
      subscriptionId: sub,
      createdAt: at(800),
    });
    for (const id of [elsewhere.id, 'dlv_doesnotexist']) {
      const res = await retry(id);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({
        code: 'resource_not_found',
        param: 'delivery_id',
      });
    }
    const row = await ctx.deps.knex('webhook_deliveries').where({ id: elsewhere.id }).first();
    expect(row).toMatchObject({ status: 'failed', round: 1 });
  });

  it('malformed ids → 400 naming the parameter', async () => {
    const bad = await retry('evt_123');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_parameter', param: 'delivery_id' });
    const badSub = await retry('dlv_abc', owner.auth, 'not-a-uuid');
    expect(badSub.body.error).toMatchObject({ code: 'invalid_parameter', param: 'id' });
    const badList = await list('', owner.auth, 'not-a-uuid');
    expect(badList.body.error).toMatchObject({ code: 'invalid_parameter', param: 'id' });
  });
});

describe('access', () => {
  let delivery: string;
  beforeAll(async () => {
    delivery = (
      await seedDelivery(ctx, {
        tenantId: owner.tenantId,
        subscriptionId: subId,
        createdAt: at(900),
      })
    ).id;
  });

  it.each(['read', 'write'] as const)('a %s key gets 403 on both routes', async (scope) => {
    const key = await ctx.keyFor(owner.tenantId, [scope]);
    for (const res of [await list('', key.auth), await retry(delivery, key.auth)]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'insufficient_scope' });
    }
  });

  it("another tenant's subscription is a 404 on both routes, and nothing changes", async () => {
    for (const res of [await list('', stranger.auth), await retry(delivery, stranger.auth)]) {
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'resource_not_found', param: 'id' });
    }
    const row = await ctx.deps.knex('webhook_deliveries').where({ id: delivery }).first();
    expect(row).toMatchObject({ status: 'failed', round: 1 });
  });

  it("a tenant's own subscription never lists another tenant's deliveries", async () => {
    const theirs = await subscribe(ctx, stranger.auth);
    const res = await list('', stranger.auth, theirs);
    expect(res.body).toEqual({ data: [], has_more: false, cursor: null });
    expect((await retry(delivery, stranger.auth, theirs)).status).toBe(404);
  });
});

describe('OpenAPI', () => {
  it('documents both routes with scope admin and their response schemas', async () => {
    const doc = dereferenced((await request(ctx.app).get('/api/v1/openapi.json')).body);
    const get = doc.paths['/webhooks/{id}/deliveries'].get;
    const post = doc.paths['/webhooks/{id}/deliveries/{delivery_id}/retry'].post;
    expect(get['x-required-scope']).toBe('admin');
    expect(post['x-required-scope']).toBe('admin');
    const page = get.responses['200'].content['application/json'].schema;
    expect(page.properties.data.items.required).toContain('attempts');
    const item = post.responses['202'].content['application/json'].schema;
    expect(item.properties.attempts.items.required).toEqual(
      expect.arrayContaining(['round', 'attempt', 'status_code', 'response_excerpt']),
    );
    expect(post.parameters.map((p: { name: string }) => p.name)).toEqual(['id', 'delivery_id']);
  });
});

describe('rate limits (like POST /webhooks/{id}/test)', () => {
  /** Retries `ids` in turn until the first 429 (at most `max`): the successes and it. */
  async function untilLimited(auth: string, sub: string, ids: string[], max: number) {
    let ok = 0;
    for (let i = 0; i < max; i++) {
      const res = await retry(ids[i % ids.length] as string, auth, sub);
      if (res.status === 429) return { ok, limited: res };
      expect(res.status).toBe(202);
      ok++;
    }
    throw new Error(`no 429 within ${max} retries`);
  }
  const seedFailed = async (tenantId: string, sub: string, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const d = await seedDelivery(ctx, {
        tenantId,
        subscriptionId: sub,
        createdAt: at(3000 + i),
        attempts: failedRound(1, 3000 + i),
      });
      ids.push(d.id);
    }
    return ids;
  };

  it('10 retries at once per subscription, then 429 with the fields of that limit', async () => {
    const t = await ctx.tenant(['admin']);
    const sub = await subscribe(ctx, t.auth);
    const ids = await seedFailed(t.tenantId, sub, 3);
    const started = Date.now();
    const spent = await untilLimited(t.auth, sub, ids, 20);
    expect(spent.ok).toBeGreaterThanOrEqual(10);
    expect(spent.ok).toBeLessThanOrEqual(10 + Math.floor((Date.now() - started) / 6000));
    expect(spent.limited.body.error).toMatchObject({ code: 'rate_limited' });
    expect(Number(spent.limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(spent.limited.headers['ratelimit-policy']).toBe(
      '"webhook-retry-subscription";q=10;w=60',
    );
    expect(spent.limited.headers.ratelimit).toMatch(/^"webhook-retry-subscription";r=0;t=\d+$/);
    // Another subscription of the tenant has a budget of its own.
    const other = await subscribe(ctx, t.auth);
    const [d] = await seedFailed(t.tenantId, other, 1);
    expect((await retry(d as string, t.auth, other)).status).toBe(202);
  });

  it('caps a tenant at 30 retries at once across its subscriptions', async () => {
    const t = await ctx.tenant(['admin']);
    const subs: string[] = [];
    for (let i = 0; i < 4; i++) subs.push(await subscribe(ctx, t.auth));
    const perSub = await Promise.all(subs.map((s) => seedFailed(t.tenantId, s, 1)));
    const started = Date.now();
    let ok = 0;
    let limited: request.Response | undefined;
    for (let i = 0; i < 40 && !limited; i++) {
      const res = await retry(perSub[i % 4]?.[0] as string, t.auth, subs[i % 4]);
      if (res.status === 429) limited = res;
      else ok++;
    }
    expect(ok).toBeGreaterThanOrEqual(30);
    expect(ok).toBeLessThanOrEqual(30 + Math.floor((Date.now() - started) / 2000));
    expect(limited?.body.error.message).toMatch(/per account/);
    expect(limited?.headers['ratelimit-policy']).toBe('"webhook-retry-tenant";q=30;w=60');
  });
});

describe('with Redis unreachable', () => {
  const logs = captureLogger();
  let down: TestContext;
  let admin: { tenantId: string; auth: string };

  beforeAll(async () => {
    down = await createTestContext(
      { REDIS_URL: `redis://127.0.0.1:${await closedPort()}` },
      { logger: logs.logger },
    );
    admin = await down.tenant(['admin']);
  });
  afterAll(() => down.close());

  it('a retry is still committed and answered 202, with a warning logged', async () => {
    const sub = await subscribe(down, admin.auth);
    const d = await seedDelivery(down, {
      tenantId: admin.tenantId,
      subscriptionId: sub,
      createdAt: at(1000),
      attempts: failedRound(1, 1000),
    });
    // A read of the same deliveries, on the same Redis-less API, is the baseline: the retry
    // is answered within the request's Redis budget of 1 s (docs/decisions/0055-outage-budgets.md)
    // plus slack from it (test/support/timing.ts).
    const baseline = await baselineMs(() =>
      request(down.app)
        .get(`/api/v1/webhooks/${sub}/deliveries`)
        .set('Authorization', admin.auth)
        .expect(200),
    );
    const { value: res, ms } = await timed(() =>
      request(down.app)
        .post(`/api/v1/webhooks/${sub}/deliveries/${d.id}/retry`)
        .set('Authorization', admin.auth),
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'pending', round: 2 });
    expect(ms).toBeLessThan(boundMs(1000, baseline));
    const row = await down.deps.knex('webhook_deliveries').where({ id: d.id }).first();
    expect(row).toMatchObject({ status: 'pending', round: 2, attempts: 0 });
    expect(logs.text()).toContain('the reconciler will enqueue it');
    expect(logs.text()).toContain(d.id);
  });
});

/** A port nothing listens on: bind an ephemeral port, then close it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}
